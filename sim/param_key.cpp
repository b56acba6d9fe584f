#include "sim/param_key.hpp"

#include "sim/edges.hpp"

namespace normsim::sim {

std::string param_name(const ParamKey& key) {
  const auto [k, w, part] = key;
  if (k < 0) return "the " + std::string(edge_name(Edge(w))) + " matrix";
  return std::string(weight_name(WeightKind(w))) + (Part(part) == Part::bias ? "'s bias" : "") +
         " at sublayer " + std::to_string(k);
}

}  // namespace normsim::sim
