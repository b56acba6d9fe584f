// Host launchers of the statistics kernels: the per-layer metrics of sim/stream_metrics.cpp (the
// specification) computed on the device, so only per-layer scalars leave it. Each launcher `foo` runs
// `foo_kernel` (gpu/stat_kernels.cu) on the default stream and has a CPU twin `cpu::foo` with the same
// signature in gpu/stat_twins.hpp; tests/gpu/test_gpu_stat_kernels.cpp checks each pair on a device.
// Sums run in double over the stream's entries widened from R, as the CPU backend's metrics do.
#pragma once
#include <cmath>
#include <cstddef>

#include "sim/hd.hpp"
#include "sim/stream_sums.hpp"

namespace normsim::gpu {

// Per row r of x (rows x n), its sim::row_sums at out[r * kRowStats] (`next`: the rows of the next stream,
// or null).
using sim::kRowStats;
using sim::row_sq;
template <class R>
void row_stats(const R* d_x, const R* d_next, int rows, int n, double* d_out);

// Per sample s and column c of x (S x T x d): (sum_t x[s,t,c] / ||x[s,t]||)^2 at out[s * d + c], the
// squares whose sum over c is the squared norm of the sum of unit token vectors (token_cos's numerator).
// row: row_stats of x. Each column summed over the tokens in order (the terms computed in parallel).
template <class R>
void unit_column_square(const R* d_x, const double* d_row, int S, int T, int d, double* d_out);

// Per sample, field-major (field f of sample s at out[f * S + s]): a stream's fields (sim/stream_sums.hpp)
// from its row stats and (token_cos; may be null: NaN) unit_column_square's S x d squares: each row added to
// the sample's sim::StreamSums by sim::add_row_stats, each field finished by sim::finish_stream_field.
using sim::kStreamFields;
using sim::StreamField;
#define NORMSIM_FIELD_USING(field, ...) using sim::field;
NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_USING)
#undef NORMSIM_FIELD_USING
void stream_stats_finish(const double* d_row, const double* d_colsq, int S, int T, int d, double* d_out);

// out[i] = double(x[i]): the stream in double for its Gram matrix.
template <class R>
void widen(const R* d_x, std::size_t n, double* d_out);
// out[s*n + i] = double(R(x[s*n + i] * R(factor[s]))) for S samples of n: scaled_sum's per-sample scaling
// (gpu/kernels.hpp) and widen in one pass, the same bits as the two (the weight-gradient norms' operands).
template <class R>
void scaled_widen(const R* d_x, const double* d_factor, std::size_t n, int S, double* d_out);

// Per sample: exp(entropy of p_i = s_i / sum s), s_i = sqrt(max(eigenvalue_i, 0)) of its Gram matrix
// (n eigenvalues at w[s * n]); NaN when the solver failed (info[s] != 0) or sum s is not > 0. As
// sim::effective_rank (Roy & Vetterli 2007).
void spectral_effective_rank(const double* d_w, const int* d_info, int n, int S, double* d_out);

// Per sample ||A^T B||_F from max|A|, max|B| and the sum of the scaled product's squares (as
// sim::frobenius_of_AtB): NaN when a max is not finite, 0 when one is 0, else sqrt(max(sum, 0)) 2^(ea+eb).
void frobenius_finish(const double* d_max_a, const double* d_max_b, const double* d_sum, int S,
                      double* d_out);

#define NORMSIM_STAT_KERNEL_INSTANTIATIONS(R)                                           \
  template void row_stats<R>(const R*, const R*, int, int, double*);                    \
  template void unit_column_square<R>(const R*, const double*, int, int, int, double*); \
  template void widen<R>(const R*, std::size_t, double*);                               \
  template void scaled_widen<R>(const R*, const double*, std::size_t, int, double*);

}  // namespace normsim::gpu
