// Position averages of the uniform attention matrix, in O(T) (closed sums over 1/max(i, j) and tails
// of the harmonic series); definitions in attention_mixing.hpp.
#include "theory/attention_mixing.hpp"

#include <stdexcept>
#include <vector>

namespace normsim::theory {

AttentionMixing AttentionMixing::uniform(int tokens, bool causal) {
  if (tokens < 1) throw std::invalid_argument("attention mixing: tokens must be >= 1");
  const double t = tokens;
  const double pairs = t * (t - 1.0);
  AttentionMixing m;
  if (!causal) {
    m.fwd_diag = m.fwd_off = m.back_diag = m.back_off = 1.0 / t;
    m.col_diag = m.col_off = 1.0;
    if (tokens == 1) m.fwd_off = m.back_off = m.col_off = 0.0;
    return m;
  }
  // (P P^T)_ij = 1/max(i,j); (P^T P)_jk = sum_{i >= max(j,k)} 1/i^2; s_j = sum_{i >= j} 1/i.
  std::vector<double> tail1(tokens + 2, 0.0), tail2(tokens + 2, 0.0);
  for (int i = tokens; i >= 1; --i) {
    tail1[i] = tail1[i + 1] + 1.0 / i;
    tail2[i] = tail2[i + 1] + 1.0 / (double(i) * i);
  }
  const double harmonic = tail1[1];
  double all_pp = 0.0, all_ptp = 0.0, sum_s2 = 0.0, sum_s = 0.0;
  for (int i = 1; i <= tokens; ++i) {
    all_pp += (2.0 * i - 1.0) / i;  // entries with max(i, j) = i
    all_ptp += (2.0 * i - 1.0) * tail2[i];
    sum_s2 += tail1[i] * tail1[i];
    sum_s += tail1[i];
  }
  m.fwd_diag = harmonic / t;
  m.back_diag = harmonic / t;  // trace(P^T P) = trace(P P^T)
  m.col_diag = sum_s2 / t;
  if (tokens > 1) {
    m.fwd_off = (all_pp - harmonic) / pairs;
    m.back_off = (all_ptp - harmonic) / pairs;
    m.col_off = (sum_s * sum_s - sum_s2) / pairs;
  }
  return m;
}

}  // namespace normsim::theory
