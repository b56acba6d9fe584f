#include "lists.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "meanfield_of/theory_overlay.hpp"
#include "plots/render_folder.hpp"
#include "records.hpp"
#include "sim/run/config_schema.hpp"
#include "sim/run/results.hpp"
#include "vocab/metrics.hpp"

namespace normsim::python {

namespace py = pybind11;

namespace {

py::list keys() {
  const sim::Config defaults;
  py::list out;
  for (const auto& k : sim::config_keys()) {
    py::dict d;
    d["name"] = std::string(k.name);
    d["type"] = std::string(sim::type_name(k.type));
    std::visit([&](const auto& v) { d["default"] = py::cast(v); }, k.get(defaults));
    d["allowed"] = k.allowed;
    d["meaning"] = std::string(k.meaning);
    d["when_set"] = k.when_set;  // a column only where some configuration sets it
    out.append(d);
  }
  return out;
}

py::list choices(const std::string& what) {
  std::span<const sim::Choice> list;
  if (what == "placements")
    list = sim::placement_choices();
  else if (what == "sublayers")
    list = sim::sublayer_choices();
  else if (what == "activations")
    list = sim::activation_choices();
  else if (what == "norms")
    list = sim::norm_choices();
  else if (what == "inits")
    list = sim::init_choices();
  else
    throw std::invalid_argument("no list '" + what + "'");
  py::list out;
  for (const auto& c : list) out.append(py::make_tuple(std::string(c.name), std::string(c.description)));
  return out;
}

// The metric table (vocab/metrics.def), read by normsim.list("metrics") and the PyTorch bridge.
py::list metrics() {
  py::list out;
  for (const auto& m : vocab::metric_table())
    out.append(py::make_tuple(std::string(m.name), m.index == vocab::MetricIndex::stream ? "l" : "k",
                              std::string(m.definition), !m.costly, std::string(vocab::pass_name(m.pass))));
  return out;
}

sim::ResultTable table_named(const std::string& name) {
  if (name == "layers") return sim::ResultTable::layers;
  if (name == "summary") return sim::ResultTable::summary;
  if (name == "theory") return sim::ResultTable::theory;
  throw std::invalid_argument("no result table '" + name + "' (layers, summary, theory)");
}

// The mean field of every config as columns (config, metric, l, k, step, [lane,] value; step 0: the mean
// field of init, kept where the frame has the column), and why configs were skipped.
py::tuple theory(const sim::Grid& grid) {
  std::vector<std::string> skipped;
  const auto values = meanfield_of::theory_values(grid, &skipped);
  const auto n = static_cast<py::ssize_t>(values.size());
  py::array_t<std::int64_t> config(n), metric(n), step(n);
  py::array_t<double> l(n), k(n), value(n);
  std::fill(step.mutable_data(), step.mutable_data() + n, 0);  // the mean field of init
  std::vector<int> lane(values.size());
  for (std::size_t r = 0; r < values.size(); ++r) {
    lane[r] = sim::theory_lane(grid.configs[values[r].config], values[r].metric);
    config.mutable_data()[r] = std::int64_t(values[r].config);
    metric.mutable_data()[r] = std::int64_t(values[r].metric);
    put_index(l.mutable_data(), k.mutable_data(), r, values[r].metric, values[r].index);
    value.mutable_data()[r] = values[r].value;
  }
  py::dict d;
  d["config"] = config, d["metric"] = metric, d["l"] = l, d["k"] = k, d["step"] = step;
  put_lanes(d, sim::has_lanes(grid.configs), lane);
  d["value"] = value;
  return py::make_tuple(d, skipped);
}

// normsim.plot(out, **keywords), their types checked by python/normsim/_api.py: the figures and report of a
// results folder, drawn as `normsim plot` draws them (plots::render_folder; the command's parser is the
// program's, app/plot_command.cpp). What the drawing prints to stderr is captured (for notebooks); a failure
// raises RuntimeError with that text and the reason.
void plot(const std::string& out, const std::vector<std::string>& metric,
          const std::vector<std::string>& format, const std::string& size, const std::string& heatmap_layer,
          bool latex, bool depth_at_first_layer, bool claims_only, bool report, int step) {
  plots::PlotOptions options;
  options.metrics = metric;
  if (!format.empty()) options.formats = format;
  if (size == "two-column")
    options.size = plots::FigureSize::two_column;
  else if (size != "one-column")
    throw std::runtime_error(
        "normsim.plot: size takes one-column (3.5 x 2.6 in) or two-column (7 x 3.2 in), not '" + size + "'");
  if (heatmap_layer == "raw")
    options.heatmap_layer = plots::HeatmapLayer::raw;
  else if (heatmap_layer != "normalized")
    throw std::runtime_error("normsim.plot: heatmap_layer takes normalized or raw, not '" + heatmap_layer +
                             "'");
  options.latex = latex;
  options.depth_at_first_layer = depth_at_first_layer;
  options.claims_only = claims_only;
  options.report = report;
  options.step = step;
  std::ostringstream err;
  std::string failure;
  {
    py::gil_scoped_release release;
    std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
    try {
      plots::render_folder(out, options);
    } catch (const std::exception& e) {
      failure = "normsim plot: " + std::string(e.what());
    }
    std::cerr.rdbuf(old);
  }
  if (!failure.empty()) throw std::runtime_error(err.str() + failure);
}

}  // namespace

void bind_lists(py::module_& m) {
  m.def("keys", &keys, "every config key: name, type, default, allowed, meaning");
  m.def("choices", &choices, py::arg("what"), "(name, meaning) of placements, sublayers, activations, ...");
  m.def("metrics", &metrics,
        "(name, index l or k, definition, default, pass) of every metric, in table order");
  m.def(
      "columns",
      [](const std::string& t, std::vector<std::string> keys, bool lanes) {
        return sim::table_columns(table_named(t), sim::named_in(std::move(keys)), lanes);
      },
      py::arg("table"), py::arg("keys") = std::vector<std::string>{}, py::arg("lanes") = false,
      "the columns of layers.csv, summary.csv or theory.csv, in file order; a key written only when set "
      "(parametrization, ...) only when `keys` names it; `lane` (after k) when `lanes`");
  m.def("theory", &theory, py::arg("grid"));
  m.def("plot", &plot, py::arg("out"), py::arg("metric"), py::arg("format"), py::arg("size"),
        py::arg("heatmap_layer"), py::arg("latex"), py::arg("depth_at_first_layer"), py::arg("claims_only"),
        py::arg("report"), py::arg("step"), "the figures and report of a results folder (normsim.plot)");
  m.def("version", [] { return py::make_tuple(sim::normsim_version(), sim::normsim_git_commit()); });
}

}  // namespace normsim::python
