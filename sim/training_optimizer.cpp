// The per-parameter rules of the training loop's optimizer (sim/training_optimizer.hpp).
#include "sim/training_optimizer.hpp"

#include "sim/edges.hpp"
#include "sim/parametrization.hpp"

namespace normsim::sim {

ParamRule param_rule(const StackShape& s, int k, WeightKind w, Part part) {
  const Config& c = s.cfg;
  const bool adam = c.update == vocab::Update::adam;
  if (!s.rules) return {c.update_lr, c.adam_eps, 1.0};
  const MatrixRule& r = s.rules->at(k, w);
  return {adam ? r.lr_adam : r.lr_sgd, r.eps, part == Part::bias ? 1.0 : r.mult};
}

ParamRule edge_param_rule(const StackShape& s, Edge e) {
  const Config& c = s.cfg;
  if (!s.rules) return {c.update_lr, c.adam_eps, 1.0};
  const EdgeDims d = edge_dims(c, e);
  const MatrixRule r = s.rules->edge(s, edge_name(e), d.fan_in, d.cols);
  return {c.update == vocab::Update::adam ? r.lr_adam : r.lr_sgd, r.eps, r.mult};
}

ParamRule param_rule(const StackShape& s, const ParamKey& key) {
  const auto [k, w, part] = key;
  return k < 0 ? edge_param_rule(s, Edge(w)) : param_rule(s, k, WeightKind(w), Part(part));
}

}  // namespace normsim::sim
