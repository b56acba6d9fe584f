#include "check.hpp"

#include <pybind11/stl.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <tuple>

#include "check/check_out.hpp"
#include "check/child_process.hpp"
#include "check/claim.hpp"
#include "check/coord.hpp"
#include "check/evaluate.hpp"
#include "check/measure.hpp"
#include "check/report.hpp"
#include "plots/render_folder.hpp"
#include "run.hpp"
#include "sim/backend.hpp"
#include "sim/run/sweep.hpp"
#include "vocab/names.hpp"

#ifndef NORMSIM_CLAIMS_DIR
#error "NORMSIM_CLAIMS_DIR must be defined by python/CMakeLists.txt"
#endif

namespace normsim::python {

namespace py = pybind11;

namespace {

struct CheckOptions {
  std::vector<std::string> ids;
  bool full = false;
  std::string claims_dir, backend, out;
  int threads = 0;
  bool plots = false, force = false;
};

// As the CLI: the folder given, else ./experiments/claims, else the source tree's.
std::filesystem::path claims_dir(const CheckOptions& o) {
  if (!o.claims_dir.empty()) return o.claims_dir;
  if (std::filesystem::is_directory("experiments/claims")) return "experiments/claims";
  return NORMSIM_CLAIMS_DIR;
}

// check's files and (with plots) the claim figures, as `normsim check --out OUT` leaves them.
void write_outputs(const CheckOptions& o, const std::vector<check::CheckedClaim>& checked,
                   const sim::Backend& backend, int threads, double seconds) {
  check::write_check_results(o.out, checked, o.full, backend, threads, seconds, o.plots);
  if (!o.plots) return;
  plots::PlotOptions options;
  options.quiet = true;
  options.claims_only = true;
  options.report_markdown = false;  // report.md is check's own
  plots::render_folder(o.out, options);
}

py::list run_check(const CheckOptions& o, const py::object& progress) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<check::ClaimSpec> claims = check::load_claims(claims_dir(o), o.ids, o.full);
  auto backend = sim::make_backend(vocab::parse<vocab::BackendChoice>(o.backend), o.threads);  // the edge
  std::unique_ptr<sim::OutLock> lock;  // out= is this check's until it ends, refused as the CLI's --out
  try {
    if (!o.out.empty()) lock = check::lock_check_out(o.out, o.force);
  } catch (const sim::SweepError& e) {
    PyErr_SetString(PyExc_FileExistsError,
                    e.what());  // as normsim.run(out=) refuses a folder that is not empty
    throw py::error_already_set();
  }
  std::vector<check::CheckedClaim> checked;
  py::list verdicts;
  for (auto& spec : claims) {
    check::CheckedClaim c{std::move(spec), {}, {}, 0};
    try {
      py::gil_scoped_release release;
      const auto t0 = std::chrono::steady_clock::now();
      c.measurement = check::measure(c.spec, *backend);
      c.result = check::evaluate(c.spec, c.measurement);
      c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (const check::Interrupted&) {
      check_signals();  // Ctrl-C while a [torch] block ran: KeyboardInterrupt, its child already stopped
      throw;
    }
    verdicts.append(check::verdict_json(c).dump());
    checked.push_back(std::move(c));
    if (!progress.is_none()) progress(double(checked.size()), double(claims.size()));
    check_signals();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!o.out.empty()) {
    py::gil_scoped_release release;
    write_outputs(o, checked, *backend, sim::resolved_threads(o.threads), seconds);
  }
  return verdicts;
}

}  // namespace

void bind_check(py::module_& m) {
  m.def(
      "check",
      [](std::vector<std::string> ids, bool full, std::string claims, std::string backend, int threads,
         std::string out, bool plots, py::object progress, bool force) {
        return run_check({std::move(ids), full, std::move(claims), std::move(backend), std::move(out),
                          threads, plots, force},
                         progress);
      },
      py::arg("ids"), py::arg("full"), py::arg("claims_dir"), py::arg("backend"), py::arg("threads"),
      py::arg("out"), py::arg("plots"), py::arg("progress"), py::arg("force") = false);
  // normsim.coord: the fits of a folder `run` wrote, into OUT/coord/ as `normsim coord` writes them.
  m.def(
      "coord",
      [](const std::string& out, const std::string& key) {
        const auto result = check::coord_fits(out, key);
        check::write_coord(out, result);
        return check::coord_summary(result);
      },
      py::arg("out"), py::arg("key"));
  m.def("claims", [](const std::string& dir) {
    std::vector<std::tuple<std::string, std::string, std::string>> rows;
    for (const auto& c : check::load_claims(claims_dir({{}, false, dir, "", "", 0, false, false})))
      rows.emplace_back(c.id, std::string(check::to_string(c.kind)), c.statement);
    return rows;
  });
  m.def("claim_ids", [](const std::string& dir) {
    std::vector<std::string> ids;
    for (const auto& c : check::load_claims(claims_dir({{}, false, dir, "", "", 0, false, false})))
      ids.push_back(c.id);
    return ids;
  });
}

}  // namespace normsim::python
