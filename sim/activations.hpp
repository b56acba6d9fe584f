// Elementwise activations and their derivatives, written once for CPU loops and CUDA kernels.
// GELU is the erf form (Hendrycks & Gimpel 2016), the one theory.md §1.1's closed forms describe.
// The CPU backend's float32 MLP runs GELU, SiLU and tanh in vectorised forms instead (activations_vec.hpp:
// GELU within 8 ulps of the exact value where this one is within 6, SiLU and tanh within 5; they differ from
// these in the last bits).
#pragma once
#include <cmath>

#include "sim/hd.hpp"

namespace normsim::sim {

enum class Activation { relu, gelu, silu, tanh, linear };

template <class R>
NORMSIM_HD R activate(Activation a, R z) {
  switch (a) {
    case Activation::relu:
      return z > R(0) ? z : R(0);
    case Activation::gelu:
      return R(0.5) * z * (R(1) + std::erf(z * R(0.70710678118654752)));
    case Activation::silu:
      return z / (R(1) + std::exp(-z));
    case Activation::tanh:
      return std::tanh(z);
    case Activation::linear:
      return z;
  }
  return z;
}

template <class R>
NORMSIM_HD R activate_derivative(Activation a, R z) {
  switch (a) {
    case Activation::relu:
      return z > R(0) ? R(1) : R(0);
    case Activation::gelu: {
      const R cdf = R(0.5) * (R(1) + std::erf(z * R(0.70710678118654752)));
      const R pdf = R(0.39894228040143268) * std::exp(R(-0.5) * z * z);
      return cdf + z * pdf;
    }
    case Activation::silu: {
      const R s = R(1) / (R(1) + std::exp(-z));
      return s * (R(1) + z * (R(1) - s));
    }
    case Activation::tanh: {
      const R t = std::tanh(z);
      return R(1) - t * t;
    }
    case Activation::linear:
      return R(1);
  }
  return R(1);
}

}  // namespace normsim::sim
