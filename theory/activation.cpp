// Activation names as configs spell them.
#include <stdexcept>
#include <string>

#include "theory/activation.hpp"

namespace normsim::theory {

std::string_view to_string(Activation a) {
  switch (a) {
    case Activation::relu:
      return "relu";
    case Activation::gelu:
      return "gelu";
    case Activation::silu:
      return "silu";
    case Activation::tanh:
      return "tanh";
    case Activation::linear:
      return "linear";
    case Activation::swiglu:
      return "swiglu";
  }
  return "?";
}

Activation parse_activation(std::string_view name) {
  for (Activation a : {Activation::relu, Activation::gelu, Activation::silu, Activation::tanh,
                       Activation::linear, Activation::swiglu}) {
    if (to_string(a) == name) return a;
  }
  throw std::invalid_argument("unknown activation '" + std::string(name) + "'");
}

}  // namespace normsim::theory
