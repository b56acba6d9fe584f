#include "sim/stack.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace normsim::sim {

std::string_view weight_name(WeightKind w) {
  switch (w) {
    case WeightKind::w1:
      return "w1";
    case WeightKind::w2:
      return "w2";
    case WeightKind::wgate:
      return "wgate";
    case WeightKind::wq:
      return "wq";
    case WeightKind::wk:
      return "wk";
    case WeightKind::wv:
      return "wv";
    case WeightKind::wo:
      return "wo";
  }
  return "?";
}

Activation parse_activation(std::string_view name) {
  if (name == "relu") return Activation::relu;
  if (name == "gelu") return Activation::gelu;
  if (name == "silu" || name == "swiglu") return Activation::silu;
  if (name == "tanh") return Activation::tanh;
  if (name == "linear") return Activation::linear;
  throw std::invalid_argument("unknown activation '" + std::string(name) + "'");
}

NormKind parse_norm(std::string_view name) {
  if (name == "layernorm") return NormKind::layernorm;
  if (name == "rmsnorm") return NormKind::rmsnorm;
  throw std::invalid_argument("unknown norm '" + std::string(name) + "'");
}

StackShape::StackShape(const Config& config)
    : cfg(config),
      depth(config.depth),
      width(config.width),
      tokens(config.tokens),
      hidden(std::max(1, int(std::lround(config.mlp_ratio * config.width)))),
      heads(config.heads),
      swiglu(config.activation == "swiglu"),
      act(parse_activation(config.activation)),
      norm(parse_norm(config.norm)) {
  if (config.sublayer != "mlp" && config.sublayer != "attention" && config.sublayer != "transformer")
    throw std::invalid_argument("unknown sublayer '" + config.sublayer + "'");
}

BranchKind StackShape::branch(int k) const {
  if (cfg.sublayer == "mlp") return BranchKind::mlp;
  if (cfg.sublayer == "attention") return BranchKind::attention;
  return k % 2 == 0 ? BranchKind::attention : BranchKind::mlp;
}

int StackShape::block(int k) const {
  return cfg.sublayer == "transformer" ? k / 2 : k;
}
int StackShape::blocks() const {
  return cfg.sublayer == "transformer" ? depth / 2 : depth;
}

std::vector<WeightKind> StackShape::weights(int k) const {
  if (branch(k) == BranchKind::attention)
    return {WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo};
  if (swiglu) return {WeightKind::wgate, WeightKind::w1, WeightKind::w2};
  return {WeightKind::w1, WeightKind::w2};
}

int StackShape::fan_in(WeightKind w) const {
  return w == WeightKind::w2 ? hidden : width;
}
int StackShape::fan_out(WeightKind w) const {
  return (w == WeightKind::w1 || w == WeightKind::wgate) ? hidden : width;
}

}  // namespace normsim::sim
