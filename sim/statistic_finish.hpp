// The statistics that are not fields of one stream (those are sim/stream_sums.hpp's), finished from what a
// device computes, written once for every device: eff_rank from a Gram matrix's eigenvalues, a weight
// gradient's Frobenius norm from the sum of squares of its power-of-two-scaled operands, and lane_cos from
// the cosines of the lanes' pairs. The CPU backend (sim/stream_metrics.cpp, sim/cpu/frobenius.hpp), the CUDA
// ops' references (gpu/stat_ops.hpp, gpu/ops.hpp) and the CUDA backend's record (gpu/device_stats.cpp) call
// these as they are; the kernels (gpu/ops/spectral_effective_rank.cu, frobenius_finish.cu, sample_max_abs.cu)
// call the per-entry terms and add them across a block, in another order. Compiled by nvcc too (C++17).
#pragma once
#include <cmath>
#include <limits>

#include "sim/hd.hpp"

namespace normsim::sim {

// eff_rank (Roy & Vetterli 2007, "The effective rank: a measure of effective dimensionality", eq. 2-3):
// exp(-sum_i p_i log p_i), p_i = s_i / sum_j s_j over the singular values s_i of the T x d stream, here
// sqrt(lambda_i) of its Gram matrix's eigenvalues. A rounding-negative eigenvalue counts as 0; a NaN one
// makes the total NaN and so the rank.
NORMSIM_HD double singular_value_of(double eigenvalue) {
  return eigenvalue < 0 ? 0.0 : std::sqrt(eigenvalue);
}
// -p log p of singular value s given the total (0 where p = 0: the limit).
NORMSIM_HD double rank_entropy_term(double s, double total) {
  const double p = s / total;
  return p > 0 ? -(p * std::log(p)) : 0.0;
}
// NaN when the eigensolver failed or the singular values do not sum to a positive number (a zero stream).
NORMSIM_HD double effective_rank_finish(double total, double entropy, bool solved) {
  return solved && total > 0 ? std::exp(entropy) : std::numeric_limits<double>::quiet_NaN();
}
// The n eigenvalues summed in index order, twice (the total, then the entropy): the CPU backend and the
// reference run this. Defined out of line (sim/statistic_finish.cpp) so that both run the same machine code:
// inlined into each caller, GCC's default contraction (-ffp-contract=fast) may fuse the entropy's multiply
// and add in one translation unit and not in another, which moved eff_rank by an ulp (measured).
double effective_rank_of_eigenvalues(const double* eigenvalues, int n, bool solved);

// ||A^T B||_F is taken on A 2^-ea and B 2^-eb, max|A| = m 2^ea with 0.5 <= m < 1 (std::frexp), so that a
// float Gram of entries near 1e19 cannot overflow (issue 16); powers of two are exact, so in range the
// result is bit for bit the unscaled one. The factor 2^-e, 1 where max_abs is 0 or not finite.
NORMSIM_HD double power_of_two_scale(double max_abs) {
  if (!std::isfinite(max_abs) || !(max_abs > 0)) return 1.0;
  int e = 0;
  std::frexp(max_abs, &e);
  return std::ldexp(1.0, -e);
}
// Whether the norm follows from the maxima alone, with no sum to form: NaN when a maximum is not finite (a
// non-finite entry never gives 0), 0 when an operand is 0.
NORMSIM_HD bool frobenius_from_maxima(double max_a, double max_b) {
  return !std::isfinite(max_a) || !std::isfinite(max_b) || max_a == 0 || max_b == 0;
}
// The norm from the scaled product's sum of squares: as frobenius_from_maxima says where it applies (the sum
// unused), else sqrt(max(sum, 0)) 2^(ea + eb) (rounding can make a near-zero Gram inner product slightly
// negative; a NaN sum stays NaN).
NORMSIM_HD double scaled_frobenius(double max_a, double max_b, double sum) {
  if (frobenius_from_maxima(max_a, max_b))
    return std::isfinite(max_a) && std::isfinite(max_b) ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  int ea = 0, eb = 0;
  std::frexp(max_a, &ea), std::frexp(max_b, &eb);
  return std::ldexp(std::sqrt(sum < 0 ? 0.0 : sum), ea + eb);
}

// The pairs i < j of n lanes in the order every device numbers them, p = 0, 1, ...: (0,1), (0,2), ...,
// (1,2), ...; f(i, j, p) for each. Returns the number of pairs.
template <class F>
int for_each_lane_pair(int lanes, F&& f) {
  int p = 0;
  for (int i = 0; i < lanes; ++i)
    for (int j = i + 1; j < lanes; ++j, ++p) f(i, j, p);
  return p;
}
// lane_cos of n lanes: the mean of cos_next(x^i, x^j) over the pairs, summed in for_each_lane_pair's order;
// pair_cosine(i, j, p) gives pair p's.
template <class PairCosine>
double lane_cosine_of_pairs(int lanes, PairCosine&& pair_cosine) {
  double sum = 0;
  const int pairs = for_each_lane_pair(lanes, [&](int i, int j, int p) { sum += pair_cosine(i, j, p); });
  return sum / double(pairs);
}

}  // namespace normsim::sim
