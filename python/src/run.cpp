#include "run.hpp"

#include <pybind11/stl.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "meanfield_of/theory_overlay.hpp"
#include "records.hpp"
#include "sim/backend.hpp"
#include "sim/run/out_lock.hpp"
#include "sim/run/staged_folder.hpp"
#include "sim/run/sweep.hpp"
#include "vocab/names.hpp"

namespace normsim::python {

namespace {

double unit_cost(const sim::Grid& grid, const sim::Unit& u) {
  const sim::Config& c = grid.configs[u.config];
  return double(u.end - u.begin) * c.depth * double(c.width) * c.width * c.tokens;
}

sim::Grid grid_from_file(const std::string& path, const std::vector<std::string>& overrides) {
  return sim::load_grid(path, overrides);
}

sim::Grid grid_from_toml(const std::string& text, const std::string& source,
                         const std::vector<std::string>& overrides) {
  return sim::parse_grid(text, source, overrides);
}

}  // namespace

void check_signals() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

Run run_grid(const sim::Grid& grid, const std::string& backend, int threads, const py::object& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  Run run{grid, {}, {}};
  run.info.started = sim::utc_now_iso8601();
  auto engine = sim::make_backend(vocab::parse<vocab::BackendChoice>(backend), threads);  // Python's edge
  run.info.threads = sim::resolved_threads(threads);
  // Units of one sample per thread: the backend still runs samples in parallel, and Ctrl-C waits for one
  // sample at most. The numbers do not depend on the split (sim/backend.hpp).
  const auto units = sim::make_units(grid, run.info.threads);
  double total = 0, done = 0;
  for (const auto& u : units) total += unit_cost(grid, u);
  std::vector<sim::UnitResult> results;
  for (const auto& u : units) {
    {
      py::gil_scoped_release release;
      results.push_back(sim::run_unit(*engine, grid, u));
    }
    done += unit_cost(grid, u);
    if (!progress.is_none()) progress(done, total);
    check_signals();
  }
  run.info.config_seconds.assign(grid.configs.size(), 0.0);
  run.records = sim::gather_records(grid, results, &run.info.config_seconds);
  run.info.backend = engine->name();
  run.info.device = engine->device();
  run.info.peak_memory_bytes = engine->peak_memory_bytes();
  run.info.peak_rss_bytes = sim::peak_rss_bytes();
  run.info.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

void Run::save(const std::string& out) const {
  sim::StagedFolder staged(out);
  const std::filesystem::path stage = staged.path();
  sim::write_nonfinite_csv(stage / "nonfinite.csv", grid, records);
  sim::write_layers_csv(stage / "layers.csv", grid, records);
  sim::write_summary_csv(stage / "summary.csv", grid, records);
  meanfield_of::write_theory_csv(stage, grid);
  sim::write_run_json(stage / "run.json", grid, info);
  staged.commit({"run.json"});  // last: marks a finished run
}

namespace {

// OUT held by a Python run from before the simulation to after its files (normsim.run(out=...)).
struct HeldOut {
  std::unique_ptr<sim::OutLock> lock;
  explicit HeldOut(const std::string& out) {
    std::filesystem::create_directories(out);
    lock = std::make_unique<sim::OutLock>(out);
  }
  void release() { lock.reset(); }
};

}  // namespace

void bind_run(py::module_& m) {
  py::class_<sim::Grid>(m, "Grid", "The configurations of one run (a config file's Cartesian product).")
      .def_static("from_file", &grid_from_file, py::arg("path"), py::arg("overrides"))
      .def_static("from_toml", &grid_from_toml, py::arg("text"), py::arg("source"), py::arg("overrides"))
      .def_readonly("name", &sim::Grid::name)
      .def_readonly("swept_keys", &sim::Grid::swept_keys)
      .def("__len__", [](const sim::Grid& g) { return g.configs.size(); })
      .def("values", &config_values, "key name -> every config's value")
      .def("json", [](const sim::Grid& g) { return sim::grid_json(g).dump(); });
  py::class_<Run>(m, "Run", "A finished run held in memory.")
      .def("layers", [](const Run& r) { return layer_columns(r.records); })
      .def("summary", [](const Run& r) { return summary_columns(r.records); })
      .def("per_sample", [](const Run& r) { return per_sample_arrays(r.grid, r.records); })
      .def("nonfinite",
           [](const Run& r) {
             // (rows, steps): nonfinite.csv's rows, the simulator's then the mean field's
             // (meanfield_of/theory_overlay.hpp), each with its step where `steps` (the file's step column).
             const bool steps = sim::has_step_column(r.grid.configs);
             py::list rows = nonfinite_rows(r.records, steps);
             for (const auto& row : meanfield_of::theory_nonfinite(r.grid))
               rows.append(nonfinite_tuple(row, steps));
             return py::make_tuple(rows, steps);
           })
      .def("run_json", [](const Run& r) { return sim::run_json(r.grid, r.info).dump(); })
      .def_readonly("grid", &Run::grid)
      .def("save", &Run::save, py::arg("out"), py::call_guard<py::gil_scoped_release>());
  py::class_<HeldOut>(m, "OutLock", "A results folder held for one run (created if needed; refused if held).")
      .def(py::init<const std::string&>(), py::arg("out"))
      .def("release", &HeldOut::release);
  m.def("run", &run_grid, py::arg("grid"), py::arg("backend"), py::arg("threads"), py::arg("progress"));
}

}  // namespace normsim::python
