// A trained parameter's identity and name, shared by the one update (sim/single_update.hpp) and the
// training loop's optimizer (sim/training_optimizer.hpp): matrix w of sublayer k or its bias, or an edge
// matrix (sim/edges.hpp).
#pragma once
#include <string>
#include <tuple>

#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

// (sublayer, weight kind, part); an edge matrix e is (-1, e, weight), outside every sublayer.
using ParamKey = std::tuple<int, int, int>;
inline ParamKey param_key(int k, WeightKind w, Part part) {
  return {k, int(w), int(part)};
}
inline ParamKey edge_param_key(Edge e) {
  return {-1, int(e), int(Part::weight)};
}
// The parameter's name in an error message ("w1's bias at sublayer 3", "the readout matrix").
std::string param_name(const ParamKey& key);

}  // namespace normsim::sim
