#include "sim/stack.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/parametrization.hpp"

namespace normsim::sim {

std::string_view weight_name(WeightKind w) {
  static constexpr std::string_view kNames[] = {
#define NORMSIM_WEIGHT_KIND_NAME(kind, ...) #kind,
      NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_NAME)
#undef NORMSIM_WEIGHT_KIND_NAME
  };
  return std::size_t(w) < std::size(kNames) ? kNames[std::size_t(w)] : "?";
}

Activation pointwise_activation(vocab::Activation a) {
  switch (a) {
    case vocab::Activation::relu:
      return Activation::relu;
    case vocab::Activation::gelu:
      return Activation::gelu;
    case vocab::Activation::silu:
    case vocab::Activation::swiglu:
      return Activation::silu;
    case vocab::Activation::tanh:
      return Activation::tanh;
    case vocab::Activation::linear:
      return Activation::linear;
  }
  throw std::invalid_argument("unknown activation");
}

StackShape::StackShape(const Config& config)
    : cfg(config),
      depth(config.depth),
      width(config.width),
      tokens(config.tokens),
      hidden(std::max(1, int(std::lround(config.mlp_ratio * config.width)))),
      experts(config.moe_experts),
      heads(config.heads),
      gate(config.attention_gate),
      swiglu(config.activation == vocab::Activation::swiglu),
      act(pointwise_activation(config.activation)),
      norm(config.norm) {
  if (config.parametrization != "none") rules = std::make_shared<const ResolvedRules>(*this);
}

BranchKind StackShape::branch(int k) const {
  return vocab::layout(cfg.sublayer).branch_at(k);
}

int StackShape::block_size() const {
  return vocab::layout(cfg.sublayer).size;
}
int StackShape::block(int k) const {
  return k / block_size();
}
int StackShape::blocks() const {
  return depth / block_size();
}

std::vector<WeightKind> StackShape::weights(int k) const {
  if (branch(k) == BranchKind::attention && gate != vocab::AttentionGate::none)
    return {WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo, WeightKind::wga};
  if (branch(k) == BranchKind::attention)
    return {WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo};
  if (branch(k) == BranchKind::cross_attention)
    return {WeightKind::cq, WeightKind::ck, WeightKind::cv, WeightKind::co};
  if (swiglu) return {WeightKind::wgate, WeightKind::w1, WeightKind::w2};
  return {WeightKind::w1, WeightKind::w2};
}

int StackShape::fan_in(WeightKind w) const {
  return w == WeightKind::w2 ? hidden : width;
}
int StackShape::fan_out(WeightKind w) const {
  if (w == WeightKind::wga) return gate == vocab::AttentionGate::headwise ? heads : width;
  if (w == WeightKind::wrouter) return experts;
  return (w == WeightKind::w1 || w == WeightKind::wgate) ? hidden : width;
}

}  // namespace normsim::sim
