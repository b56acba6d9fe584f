#include "lists.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <iostream>
#include <sstream>
#include <stdexcept>

#include "check/theory_overlay.hpp"
#include "plots/plot_command.hpp"
#include "records.hpp"
#include "sim/config_schema.hpp"
#include "sim/results.hpp"
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

// The mean field of every config as columns (config, metric, l, k, value), and why configs were skipped.
py::tuple theory(const sim::Grid& grid) {
  std::vector<std::string> skipped;
  const auto values = check::theory_values(grid, &skipped);
  const auto n = static_cast<py::ssize_t>(values.size());
  py::array_t<std::int64_t> config(n), metric(n);
  py::array_t<double> l(n), k(n), value(n);
  for (std::size_t r = 0; r < values.size(); ++r) {
    config.mutable_data()[r] = std::int64_t(values[r].config);
    metric.mutable_data()[r] = std::int64_t(values[r].metric);
    put_index(l.mutable_data(), k.mutable_data(), r, values[r].metric, values[r].index);
    value.mutable_data()[r] = values[r].value;
  }
  py::dict d;
  d["config"] = config, d["metric"] = metric, d["l"] = l, d["k"] = k, d["value"] = value;
  return py::make_tuple(d, skipped);
}

// `normsim plot ARGS`: the exit status and what it printed to stderr (captured, for notebooks).
py::tuple plot(const std::vector<std::string>& args) {
  std::ostringstream err;
  int status = 0;
  {
    py::gil_scoped_release release;
    std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
    try {
      status = plots::plot_command(args);
    } catch (...) {
      std::cerr.rdbuf(old);
      throw;
    }
    std::cerr.rdbuf(old);
  }
  return py::make_tuple(status, err.str());
}

}  // namespace

void bind_lists(py::module_& m) {
  m.def("keys", &keys, "every config key: name, type, default, allowed, meaning");
  m.def("choices", &choices, py::arg("what"), "(name, meaning) of placements, sublayers, activations, ...");
  m.def("metrics", &metrics,
        "(name, index l or k, definition, default, pass) of every metric, in table order");
  m.def(
      "columns", [](const std::string& t) { return sim::table_columns(table_named(t)); }, py::arg("table"),
      "the columns of layers.csv, summary.csv or theory.csv, in file order");
  m.def("theory", &theory, py::arg("grid"));
  m.def("plot", &plot, py::arg("args"), "normsim plot ARGS: (exit status, stderr text)");
  m.def("version", [] { return py::make_tuple(sim::normsim_version(), sim::normsim_git_commit()); });
}

}  // namespace normsim::python
