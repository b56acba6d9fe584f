// Running a grid from Python: the units of work run with the GIL released, a progress callable and Ctrl-C
// (PyErr_CheckSignals) between units, and the records kept in memory (nothing is written unless saved).
#pragma once
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "sim/run/config_file.hpp"
#include "sim/run/results.hpp"

namespace normsim::python {

namespace py = pybind11;

// A finished run: the grid, every sample's records, and what run.json records about the run.
struct Run {
  sim::Grid grid;
  sim::GridRecords records;
  sim::RunInfo info;
  // OUT/nonfinite.csv, layers.csv, summary.csv, run.json and theory.csv, as `normsim run` writes them: all
  // or none (sim/run/staged_folder.hpp). The caller holds OUT's lock (OutLock; normsim._result.held_out).
  void save(const std::string& out) const;
};

// Calls progress(done, total) (in units of cost: samples x depth x width^2 x tokens) after every unit and
// raises KeyboardInterrupt (or whatever the callable raised) there.
Run run_grid(const sim::Grid& grid, const std::string& backend, int threads, const py::object& progress);

// Throws py::error_already_set when a signal handler (Ctrl-C) raised.
void check_signals();

void bind_run(py::module_& m);

}  // namespace normsim::python
