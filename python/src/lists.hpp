// What can be configured (`normsim list`), the result tables' columns, the mean field of a grid, and
// `normsim plot`.
#pragma once
#include <pybind11/pybind11.h>

namespace normsim::python {

void bind_lists(pybind11::module_& m);

}  // namespace normsim::python
