// normsim._core: the compiled half of `import normsim` (docs/python.md). The pure-Python package around it
// (python/normsim/) builds DataFrames, the progress bar and the PyTorch bridge. Errors become Python
// exceptions carrying the CLI's message.
#include <pybind11/pybind11.h>

#include <system_error>

#include "check.hpp"
#include "check/claim.hpp"
#include "fields.hpp"
#include "io/csv_write.hpp"
#include "lists.hpp"
#include "run.hpp"
#include "sim/backend.hpp"
#include "sim/cpu/register.hpp"
#include "sim/run/config_file.hpp"
#if defined(NORMSIM_HAVE_CUDA) || defined(NORMSIM_HAVE_REFERENCE)
#include "gpu/register.hpp"
#endif

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "normsim's compiled core; use the normsim package (docs/python.md)";
  normsim::sim::cpu::register_backend();  // backend "cpu" (and auto's fallback) finds the CPU engine
#ifdef NORMSIM_HAVE_CUDA
  normsim::gpu::register_backend();  // backend "cuda"/"auto" finds the CUDA backend, as in the CLI
#endif
#ifdef NORMSIM_HAVE_REFERENCE
  normsim::gpu::register_reference_backend();  // backend "reference", as in the CLI
#endif
  // A bad config or claim file: "FILE:LINE: key 'K': why" or "--set K=V: why", the CLI's message.
  auto& config_error = py::register_exception<normsim::sim::ConfigError>(m, "ConfigError", PyExc_ValueError);
  py::register_exception<normsim::check::ClaimError>(m, "ClaimError", config_error.ptr());
  py::register_exception<normsim::sim::BackendUnavailable>(m, "BackendUnavailable", PyExc_RuntimeError);
  // A file that cannot be written or read (a full disk, no permission) is an OSError with its errno, as
  // Python's own file functions raise it (std::filesystem_error is a std::system_error).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::system_error& e) {
      PyErr_SetObject(PyExc_OSError, py::make_tuple(e.code().value(), e.what()).ptr());
    }
  });
  normsim::python::bind_run(m);
  normsim::python::bind_lists(m);
  normsim::python::bind_check(m);
  normsim::python::bind_fields(m);
  // How normsim writes a CSV field, for Result.save of frames Python holds: the C++ writers' own functions.
  m.def(
      "format_number", &normsim::io::format_number,
      "The shortest text that reads back as x, never a bare integer of 16 or more digits (io/csv_write.hpp)");
  m.def(
      "csv_field", [](const std::string& text) { return normsim::io::csv_field(text); },
      "Text quoted, quotes doubled, where it holds a comma, quote or line break (io/csv_write.hpp)");
}
