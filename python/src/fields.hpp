// The stream fields and eff_rank of a PyTorch model's streams (the bridge, python/normsim/_metrics.py),
// computed by the simulator's own code (sim/stream_sums.hpp, sim/stream_metrics.hpp).
#pragma once
#include <pybind11/pybind11.h>

namespace normsim::python {

void bind_fields(pybind11::module_& m);

}  // namespace normsim::python
