#include "records.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include <pybind11/stl.h>

#include "sim/metrics.hpp"
#include "sim/run/config_schema.hpp"

namespace normsim::python {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
T* data(py::array_t<T>& a) {
  return a.mutable_data();
}

// Whether some record is of a block of n > 1 lanes: then the tables have the `lane` column.
bool has_lanes(const sim::GridRecords& records) {
  for (const auto& c : records)
    for (const auto& r : c)
      if (!r.lanes.empty()) return true;
  return false;
}

}  // namespace

void put_lanes(py::dict& d, bool lanes, const std::vector<int>& lane) {
  if (!lanes) return;
  py::list fields;
  for (const int i : lane) fields.append(sim::lane_field(i));
  d["lane"] = fields;
}

void put_index(double* l, double* k, std::size_t row, std::size_t metric, std::size_t index) {
  const bool stream = sim::index_column(metric) == "l";
  l[row] = stream ? double(index) : kNaN;
  k[row] = stream ? kNaN : double(index);
}

py::dict layer_columns(const sim::GridRecords& records) {
  std::size_t rows = 0;
  sim::for_each_layer_value(records, [&](const sim::LayerValue&) { ++rows; });
  const auto n = static_cast<py::ssize_t>(rows);
  py::array_t<std::int64_t> config(n), sample(n), metric(n), step(n);
  py::array_t<double> l(n), k(n), value(n);
  const bool lanes = has_lanes(records);
  std::vector<int> lane;
  std::size_t r = 0;
  sim::for_each_layer_value(records, [&](const sim::LayerValue& v) {
    data(config)[r] = std::int64_t(v.config);
    data(sample)[r] = v.sample;
    data(step)[r] = v.step;
    data(metric)[r] = std::int64_t(v.metric);
    put_index(data(l), data(k), r, v.metric, v.index);
    if (lanes) lane.push_back(v.lane);
    data(value)[r++] = v.value;
  });
  py::dict d;
  d["config"] = config, d["sample"] = sample, d["metric"] = metric;
  d["l"] = l, d["k"] = k, d["step"] = step;  // step: kept where the frame has the column
  put_lanes(d, lanes, lane);
  d["value"] = value;
  return d;
}

py::dict summary_columns(const sim::GridRecords& records) {
  std::vector<sim::SummaryValue> rows;
  sim::for_each_summary(records, [&](const sim::SummaryValue& v) { rows.push_back(v); });
  const auto n = static_cast<py::ssize_t>(rows.size());
  py::array_t<std::int64_t> config(n), metric(n), count(n), step(n);
  py::array_t<double> l(n), k(n), mean(n), se(n);
  std::vector<int> lane;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& v = rows[r];
    data(config)[r] = std::int64_t(v.config);
    data(metric)[r] = std::int64_t(v.metric);
    data(step)[r] = v.step;
    put_index(data(l), data(k), r, v.metric, v.index);
    lane.push_back(v.lane);
    data(mean)[r] = v.summary.mean;
    data(se)[r] = v.summary.se;
    data(count)[r] = v.summary.n;
  }
  py::dict d;
  d["config"] = config, d["metric"] = metric, d["l"] = l, d["k"] = k, d["step"] = step;
  put_lanes(d, has_lanes(records), lane);
  d["mean"] = mean, d["se"] = se, d["n"] = count;
  return d;
}

py::dict per_sample_arrays(const sim::Grid& grid, const sim::GridRecords& records) {
  py::dict out;
  const auto table = sim::metric_table();
  // A grid with steps: the values at init (step 0); every step's are in the layers frame.
  std::size_t samples = 0;
  for (const auto& c : records)
    for (const auto& r : c) samples = std::max(samples, std::size_t(r.sample) + 1);
  for (std::size_t m = 0; m < table.size(); ++m) {
    if (std::none_of(grid.configs.begin(), grid.configs.end(),
                     [&](const sim::Config& c) { return c.metrics.contains(int(m)); }))
      continue;
    std::size_t size = 0;
    for (const auto& c : records)
      for (const auto& r : c)
        if (m < r.values.size()) size = std::max(size, r.values[m].size());
    py::array_t<double> a({records.size(), samples, size});
    double* p = a.mutable_data();
    std::fill(p, p + a.size(), kNaN);
    for (std::size_t c = 0; c < records.size(); ++c)
      for (const auto& r : records[c]) {
        if (m >= r.values.size() || r.step != 0) continue;
        const std::size_t s = std::size_t(r.sample);
        for (std::size_t i = 0; i < r.values[m].size(); ++i)
          if (std::isfinite(r.values[m][i])) p[(c * samples + s) * size + i] = r.values[m][i];
      }
    out[py::str(std::string(table[m].name))] = a;
  }
  return out;
}

py::tuple nonfinite_tuple(const sim::NonFiniteRow& r, bool with_step) {
  if (with_step)
    return py::make_tuple(r.config, r.sample, std::string(r.pass), r.layer, sim::nonfinite_metric(r), r.step);
  return py::make_tuple(r.config, r.sample, std::string(r.pass), r.layer, sim::nonfinite_metric(r));
}

py::list nonfinite_rows(const sim::GridRecords& records, bool with_step) {
  py::list rows;
  sim::for_each_nonfinite(records,
                          [&](const sim::NonFiniteRow& r) { rows.append(nonfinite_tuple(r, with_step)); });
  return rows;
}

py::dict config_values(const sim::Grid& grid) {
  py::dict out;
  for (const auto& name : sim::key_columns(sim::set_in(grid.configs))) {
    const sim::KeyInfo* key = sim::find_key(name);
    py::list values;
    for (const auto& config : grid.configs)
      std::visit([&](const auto& v) { values.append(py::cast(v)); }, key->get(config));
    out[py::str(name)] = values;
  }
  for (const auto& key : sim::config_keys()) {  // the lists of names (`metrics`), no column of the tables
    if (key.type != sim::KeyType::name_list) continue;
    py::list values;
    for (const auto& config : grid.configs)
      values.append(py::cast(std::get<std::vector<std::string>>(key.get(config))));
    out[py::str(std::string(key.name))] = values;
  }
  return out;
}

}  // namespace normsim::python
