// The MLP activation over rows and blocks of a CPU matrix. In float32, GELU, SiLU and tanh are vectorised
// (the kernels of activation_pieces.hpp, on fixed 64-entry pieces of a row: an entry's bits do not depend on
// where it sits): GELU z Phi(z) with a fitted erfc and Eigen's exp, SiLU z sigmoid(z) with Eigen's exp,
// tanh Eigen's rational tanh with tanh' = 4 e / (1 + e)^2 from exp; tests/cpu/test_activations_vec.cpp
// measures them against the double-precision definitions. GELU and SiLU keep a gate from the forward
// (Phi(z), and sigmoid(-|z|)), from which the CPU MLP rebuilds the activations (the same bits) and their
// derivatives without erfc (GELU' = Phi + z phi: one exp) or exp (SiLU). ReLU and linear are the scalar
// definitions, inlined per activation. In float64, activate() entry by entry: the scalar definitions the
// CUDA kernels share (activations.hpp).
#pragma once
#include <Eigen/Core>
#include <type_traits>

#include "sim/activations.hpp"
#include "sim/cpu/activation_pieces.hpp"

namespace normsim::sim {

// Whether activation `a` in precision R runs the vectorised kernels below.
template <class R>
constexpr bool vectorised(Activation a) {
  return std::is_same_v<R, float> &&
         (a == Activation::gelu || a == Activation::silu || a == Activation::tanh);
}

// Whether it keeps a gate from the forward for the backward: GELU's Phi(z), SiLU's sigmoid(-|z|).
template <class R>
constexpr bool keeps_gate(Activation a) {
  return vectorised<R>(a) && a != Activation::tanh;
}

// a = act(z) and gate = its gate (keeps_gate), each for n floats where not null.
inline void activate_row(Activation act, const float* z, float* gate, float* a, Eigen::Index n) {
  using act_pieces::Piece;
  act_pieces::for_pieces(z, nullptr, n, [&](const Piece& x, const Piece&, Eigen::Index i, Eigen::Index c) {
    Piece g = Piece::Zero(), y;
    if (act == Activation::gelu) {
      g = act_pieces::normal_cdf(x);
      y = x * g;
    } else if (act == Activation::silu) {
      g = act_pieces::small_sigmoid(x);
      y = act_pieces::silu(x, g);
    } else {
      y = x.tanh();
    }
    if (gate) act_pieces::store_piece(gate + i, g, c);
    if (a) act_pieces::store_piece(a + i, y, c);
  });
}

// a = act(z) for n floats from the gate activate_row kept (keeps_gate): the same bits.
inline void activate_row_from_gate(Activation act, const float* z, const float* gate, float* a,
                                   Eigen::Index n) {
  using act_pieces::Piece;
  act_pieces::for_pieces(z, gate, n, [&](const Piece& x, const Piece& g, Eigen::Index i, Eigen::Index c) {
    const Piece y = act == Activation::gelu ? Piece(x * g) : act_pieces::silu(x, g);
    act_pieces::store_piece(a + i, y, c);
  });
}

// d *= act'(z) for n floats, from the gate where keeps_gate (else gate is unused). GELU's Phi + z phi is
// summed over the row's entries, apart from the piece that makes z phi: that keeps the compiler from fusing
// it into a multiply-add, so GELU keeps the bits it had before SiLU and tanh came here.
inline void multiply_row_by_derivative(Activation act, const float* z, const float* gate, float* d,
                                       Eigen::Index n) {
  using act_pieces::Piece;
  act_pieces::for_pieces(z, gate, n, [&](const Piece& x, const Piece& g, Eigen::Index i, Eigen::Index c) {
    Piece y;
    if (act == Activation::gelu) {
      const Piece pdf_term = act_pieces::z_normal_pdf(x);
      y = g + pdf_term;
    } else {
      y = act == Activation::silu ? act_pieces::silu_derivative(x, g) : act_pieces::tanh_derivative(x);
    }
    act_pieces::store_piece(d + i, act_pieces::load_piece(d + i, c) * y, c);
  });
}

// The first entry of row t of a row-major matrix or block.
template <class M>
auto row(M&& m, Eigen::Index t) {
  return m.data() + t * m.outerStride();
}

// out = act(z) for a block of a row-major matrix.
template <class In, class Out>
void activate_block(Activation a, const Eigen::MatrixBase<In>& z, Out&& out) {
  using R = typename In::Scalar;
  static_assert(In::IsRowMajor, "rows of z are contiguous");
  if constexpr (std::is_same_v<R, float>) {
    if (vectorised<R>(a)) {
      for (Eigen::Index t = 0; t < z.rows(); ++t)
        activate_row(a, row(z.derived(), t), nullptr, row(out, t), z.cols());
      return;
    }
  }
  if (a == Activation::relu)
    out = z.unaryExpr([](R v) { return activate(Activation::relu, v); });
  else if (a == Activation::linear)
    out = z;
  else
    out = z.unaryExpr([a](R v) { return activate(a, v); });
}

// d = d * act'(z), entry by entry, for a block of a row-major matrix.
template <class In, class Out>
void multiply_by_derivative(Activation a, const Eigen::MatrixBase<In>& z, Out&& d) {
  using R = typename In::Scalar;
  static_assert(In::IsRowMajor, "rows of z are contiguous");
  if constexpr (std::is_same_v<R, float>) {
    if (vectorised<R>(a)) {
      Eigen::ArrayXf gate(keeps_gate<R>(a) ? z.cols() : 0);
      for (Eigen::Index t = 0; t < z.rows(); ++t) {
        if (gate.size()) activate_row(a, row(z.derived(), t), gate.data(), nullptr, z.cols());
        multiply_row_by_derivative(a, row(z.derived(), t), gate.size() ? gate.data() : nullptr, row(d, t),
                                   z.cols());
      }
      return;
    }
  }
  if (a == Activation::relu)
    d = d.cwiseProduct(z.unaryExpr([](R v) { return activate_derivative(Activation::relu, v); }));
  else if (a != Activation::linear)  // linear: d * 1 is d
    d = d.cwiseProduct(z.unaryExpr([a](R v) { return activate_derivative(a, v); }));
}

}  // namespace normsim::sim
