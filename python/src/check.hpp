// `normsim check` from Python: the claims run with the GIL released, one progress step per claim, Ctrl-C
// between claims; the verdicts come back as JSON objects (verdicts.json's fields, docs/claims.md).
#pragma once
#include <pybind11/pybind11.h>

namespace normsim::python {

void bind_check(pybind11::module_& m);

}  // namespace normsim::python
