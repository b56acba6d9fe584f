// Internal to theory/: the joint Gram of a block's lanes and its backward record (docs/design/multistream.md
// 3.4). Between units the mean field carries the m values a unit reads: the n lanes, then emb when the block
// reads it. Within a unit the values are combinations of uncorrelated parts
// (theory/placements/unit_tape.hpp); lane_parts() finds parts for the carried Gram, and a LaneRecord maps the
// output values' joint gradient Gram back to the input values'.
#pragma once
#include <span>
#include <vector>

#include "theory/token_gram.hpp"

namespace normsim::theory::detail {

// The joint Gram of m values: entry (i, j) is {x^i_t . x^j_t / d, x^i_t . x^j_s / d} (t != s), the matrices A
// (same token) and B (two tokens) of the design note. Symmetric.
struct LaneGram {
  int m = 0;
  std::vector<TokenGram> entry;  // row-major, m x m

  LaneGram() = default;
  LaneGram(int values, TokenGram fill) : m(values), entry(std::size_t(values) * std::size_t(values), fill) {}
  TokenGram& operator()(int i, int j) { return entry[std::size_t(i * m + j)]; }
  const TokenGram& operator()(int i, int j) const { return entry[std::size_t(i * m + j)]; }
  // The Gram of the sum of values 0..n-1: the sum of their entries.
  TokenGram sum(int n) const;
  bool finite() const;
};

// The m values as combinations of r <= m uncorrelated parts: value i = sum_p coef[i r + p] z_p, part p of
// Gram {1, off[p]}. At least one part (of zero coefficients when every value is zero).
struct LaneParts {
  int r = 0;
  std::vector<double> coef;  // m x r
  std::vector<double> off;   // r
};

// Simultaneous diagonalization of (A, B) (docs/design/multistream.md 3.4): A = U S U^T keeping the
// eigenvalues above a rounding floor (copies, as at hyper-connections' init, leave one), then W = S^-1/2
// U^T B U S^-1/2 = Q L Q^T; coef = U S^1/2 Q, off = diag(L). Exact when B lies in A's range, which holds for
// the Grams of real token vectors (a cross-token moment of x^i is a same-token moment of its token mean).
LaneParts lane_parts(const LaneGram& g);

// The backward of one unit of lanes. By gradient independence (theory.md §0) the gradient at every value of
// the unit is a combination of the output values' gradients, correlated with one another (their joint Gram
// G), and one fresh component per branch f, J_f^T applied to the gradient at F_f's raw output, uncorrelated
// with everything else, of Gram Phi_f = V_f(Gram at F_f's output) (V_f the branch's backward map).
// Coefficient rows hold m entries for the outputs' gradients, then one per fresh component.
struct LaneRecord {
  struct Fresh {
    int slot = 0;              // the unit's sublayer whose branch it is
    GramMap back;              // V_f
    std::vector<double> coef;  // the gradient at F_f's raw output (only earlier fresh components enter)
  };
  int m = 0;                               // 0: no record (the forward overflowed before this unit)
  std::vector<Fresh> fresh;                // in the reverse walk's order: each reads only those before it
  std::vector<std::vector<double>> input;  // per input value, its gradient
  std::vector<std::vector<double>>
      inner;  // per inner layer k + j (j = 1 .. span-1), its lanes' summed gradient
};

// The input values' joint gradient Gram from the output values' `g`. branch[slot] receives the Gram at the
// slot's F raw output, inner[j - 1] that of layer k + j's lanes' summed gradient. A missing record (m = 0)
// gives NaN everywhere.
LaneGram back(const LaneRecord& r, const LaneGram& g, std::span<TokenGram> branch,
              std::span<TokenGram> inner);

}  // namespace normsim::theory::detail
