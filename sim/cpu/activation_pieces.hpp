// The float32 activation kernels of the CPU backend, on fixed pieces of 64 entries: every entry goes through
// the same vector code (Eigen's fixed-size arrays, no scalar tail), so its bits do not depend on where it
// sits in a row. tests/cpu/test_activations_vec.cpp measures each against the double-precision definitions.
#pragma once
#include <Eigen/Core>
#include <algorithm>

namespace normsim::sim::act_pieces {

constexpr Eigen::Index kPiece = 64;
using Piece = Eigen::Array<float, kPiece, 1>;

// sigmoid(-|z|) is taken at |z| <= kSigmoidTail only: exp(-80) = 1.8e-35 is still a normal float, and past it
// the sigmoid's tail (and z times it) is below any float entry's resolution against the O(1) values it
// meets, so keeping the value at 80 costs an absolute error under 2e-33 and keeps z = -inf from meeting 0.
constexpr float kSigmoidTail = 80.0f;

// GCC 12 flags its own avx512fintrin.h, inlined from Eigen's vectorised exp, as reading an uninitialized
// variable: a known false positive (GCC bug 105593), silenced for these kernels only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // clang has no -Wmaybe-uninitialized (and no such false positive)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Phi(z) = P(N(0,1) <= z): 0.5 erfc(|z| / sqrt 2) is the tail, with the Chebyshev-fitted erfc of Numerical
// Recipes (Press et al., 2nd ed., §6.2: relative error below 1.2e-7 everywhere, so no cancellation for z <
// 0).
inline Piece normal_cdf(const Piece& z) {
  const Piece x = z.abs() * 0.70710678118654752f, t = 1.0f / (1.0f + 0.5f * x);
  Piece p = t * 0.17087277f - 0.82215223f;
  for (const float c :
       {1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f})
    p = p * t + c;
  const Piece tail = 0.5f * t * (p * t - 1.26551223f - x * x).exp();
  return (z < 0.0f).select(tail, 1.0f - tail);
}

// z phi(z), phi the normal density.
inline Piece z_normal_pdf(const Piece& z) {
  return z * (0.39894228040143268f * (-0.5f * z * z).exp());
}

// q = sigmoid(-|z|) = e / (1 + e), e = exp(-|z|): the smaller of sigmoid(z) and 1 - sigmoid(z), both to
// float's relative accuracy from it (no 1 - sigmoid cancellation, no overflow of exp).
inline Piece small_sigmoid(const Piece& z) {
  const Piece e = (-z.abs().min(kSigmoidTail)).exp();
  return e / (1.0f + e);
}

// sigmoid(z) and 1 - sigmoid(z) from q = small_sigmoid(z).
inline Piece sigmoid(const Piece& z, const Piece& q) {
  return (z < 0.0f).select(q, 1.0f - q);
}
inline Piece one_minus_sigmoid(const Piece& z, const Piece& q) {
  return (z < 0.0f).select(1.0f - q, q);
}

// SiLU(z) = z sigmoid(z), from q; z below -kSigmoidTail counts as -kSigmoidTail (-inf gives -1.4e-33, not
// -inf * q).
inline Piece silu(const Piece& z, const Piece& q) {
  return z.max(-kSigmoidTail) * sigmoid(z, q);
}

// SiLU'(z) = s (1 + z (1 - s)), s = sigmoid(z), from q; z clamped to +-kSigmoidTail, past which z (1 - s)
// is below 2e-33 (so +-inf give 1 and 0, not inf * 0).
inline Piece silu_derivative(const Piece& z, const Piece& q) {
  const Piece zc = z.max(-kSigmoidTail).min(kSigmoidTail);
  return sigmoid(z, q) * (1.0f + zc * one_minus_sigmoid(z, q));
}

// tanh'(z) = 1 - tanh(z)^2 = 4 e / (1 + e)^2, e = exp(-2|z|): relative accuracy also where 1 - tanh^2
// cancels (|z| beyond a few; Eigen's float tanh is exactly 1 from its clamp at |z| = 7.9 or 8.0 on, where
// tanh' is still 5e-7).
inline Piece tanh_derivative(const Piece& z) {
  const Piece e = (-2.0f * z.abs().min(0.5f * kSigmoidTail)).exp(), s = 1.0f + e;
  return 4.0f * e / (s * s);
}

#pragma GCC diagnostic pop

// The c <= kPiece entries at p as a piece, zeros after them. A whole piece is read as a fixed-size block:
// the general path's run-time-length copies went through memmove, a call per piece that took 5 % of W1.
inline Piece load_piece(const float* p, Eigen::Index c) {
  if (c == kPiece) return Eigen::Map<const Piece>(p);
  Piece x = Piece::Zero();
  x.head(c) = Eigen::Map<const Eigen::ArrayXf>(p, c);
  return x;
}

// The first c entries of y into p (a whole piece as a fixed-size block, as load_piece).
inline void store_piece(float* p, const Piece& y, Eigen::Index c) {
  if (c == kPiece)
    Eigen::Map<Piece>{p} = y;
  else
    Eigen::Map<Eigen::ArrayXf>(p, c) = y.head(c);
}

// Calls f(piece of z, piece of g, offset, count) for the n entries of z (and g, zeros where g is null) in
// pieces of kPiece, the last ones padded with zeros.
template <class F>
void for_pieces(const float* z, const float* g, Eigen::Index n, F f) {
  for (Eigen::Index i = 0; i < n; i += kPiece) {
    const Eigen::Index c = std::min(kPiece, n - i);
    f(load_piece(z + i, c), g ? load_piece(g + i, c) : Piece(Piece::Zero()), i, c);
  }
}

}  // namespace normsim::sim::act_pieces
