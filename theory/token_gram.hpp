// The mean-field state of T exchangeable tokens: the per-coordinate second moment of one token and the
// per-coordinate cross moment of two different tokens. Forward it describes the stream (v, v * rho),
// backward the gradient (grad_sq, its token cross moment). Every backward step of the mean field is a
// linear map of this pair (gradient-independence assumption, theory.md §0), written as a GramMap.
#pragma once
#include <limits>

namespace normsim::theory {

struct TokenGram {
  double diag = 0.0;  // mean_i x_t[i]^2
  double off = 0.0;   // mean_i x_t[i] x_s[i], t != s
  // 0 for a zero stream (no direction); NaN for a NaN or infinite diagonal (an overflow), never a silent 0.
  double cos() const {
    if (diag > 0.0 && diag < std::numeric_limits<double>::infinity()) return off / diag;
    return diag == 0.0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  }
};

inline TokenGram operator+(TokenGram a, TokenGram b) {
  return {a.diag + b.diag, a.off + b.off};
}
inline TokenGram operator*(double s, TokenGram a) {
  return {s * a.diag, s * a.off};
}

// (diag, off) -> (dd diag + do_ off, od diag + oo off).
struct GramMap {
  double dd = 1.0, do_ = 0.0, od = 0.0, oo = 1.0;
  static GramMap identity() { return {}; }
  static GramMap scale(double s) { return {s, 0.0, 0.0, s}; }
  TokenGram operator()(TokenGram g) const { return {dd * g.diag + do_ * g.off, od * g.diag + oo * g.off}; }
};

inline GramMap operator+(GramMap a, GramMap b) {
  return {a.dd + b.dd, a.do_ + b.do_, a.od + b.od, a.oo + b.oo};
}
inline GramMap operator*(double s, GramMap a) {
  return {s * a.dd, s * a.do_, s * a.od, s * a.oo};
}
// Composition: (a * b)(g) = a(b(g)).
inline GramMap operator*(GramMap a, GramMap b) {
  return {a.dd * b.dd + a.do_ * b.od, a.dd * b.do_ + a.do_ * b.oo, a.od * b.dd + a.oo * b.od,
          a.od * b.do_ + a.oo * b.oo};
}

}  // namespace normsim::theory
