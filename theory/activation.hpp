// Pointwise activations as the theory sees them: the function and its derivative (names: vocab/names.hpp).
// Kept separate from sim/ on purpose (theory must not depend on the simulator); GELU is the erf form,
// the one whose closed forms theory.md §1.1 gives.
#pragma once
#include <cmath>

#include "vocab/enums.hpp"

namespace normsim::theory {

// swiglu is a branch shape, not a pointwise map: its moments come from silu (theory.md §1.1).
using Activation = vocab::Activation;

inline double activate(Activation a, double z) {
  switch (a) {
    case Activation::relu:
      return z > 0.0 ? z : 0.0;
    case Activation::gelu:
      return 0.5 * z * (1.0 + std::erf(z * M_SQRT1_2));
    case Activation::silu:
    case Activation::swiglu:
      return z / (1.0 + std::exp(-z));
    case Activation::tanh:
      return std::tanh(z);
    case Activation::linear:
      return z;
  }
  return z;
}

inline double activate_derivative(Activation a, double z) {
  switch (a) {
    case Activation::relu:
      return z > 0.0 ? 1.0 : 0.0;
    case Activation::gelu:
      return 0.5 * (1.0 + std::erf(z * M_SQRT1_2)) + z * 0.39894228040143268 * std::exp(-0.5 * z * z);
    case Activation::silu:
    case Activation::swiglu: {
      const double s = 1.0 / (1.0 + std::exp(-z));
      return s * (1.0 + z * (1.0 - s));
    }
    case Activation::tanh: {
      const double t = std::tanh(z);
      return 1.0 - t * t;
    }
    case Activation::linear:
      return 1.0;
  }
  return 1.0;
}

}  // namespace normsim::theory
