// The stream fields of a PyTorch model's streams (the bridge, python/normsim/_metrics.py), computed by the
// simulator's own code (sim/stream_sums.hpp).
#pragma once
#include <pybind11/pybind11.h>

namespace normsim::python {

void bind_fields(pybind11::module_& m);

}  // namespace normsim::python
