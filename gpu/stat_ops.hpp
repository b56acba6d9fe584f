// The statistics ops: the per-layer metrics of sim/stream_metrics.cpp (the specification) computed on the
// device, so only per-layer scalars leave it. Each op's reference `cpu::foo` (serial loops over host
// pointers; itself tested against sim/stream_metrics.cpp by tests/gpu/test_stat_twins.cpp) and below it its
// launcher `foo`, declared by NORMSIM_GPU_OP (gpu/op.hpp), which runs `foo_kernel` (gpu/ops/foo.cu) on the
// default stream; tests/gpu/test_gpu_ops.cpp compares the two on a device. Sums run in double over the
// stream's entries widened from R, as the CPU backend's metrics do.
#pragma once
#include <cstddef>

#include "gpu/op.hpp"
#include "sim/hd.hpp"
#include "sim/statistic_finish.hpp"
#include "sim/stream_sums.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// Per row r of x (rows x n), its sim::row_sums at out[r * kRowStats] (`next`: the rows of the next stream,
// or null).
using sim::kRowStats;
using sim::row_sq;
namespace cpu {
template <class R>
void row_stats(const R* x, const R* next, int rows, int n, double* out) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t o = std::size_t(r) * n;
    sim::row_sums(x + o, next ? next + o : nullptr, n, out + std::size_t(r) * kRowStats);
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(row_stats, (const R* d_x, const R* d_next, int rows, int n, double* d_out),
                 (d_x, d_next, rows, n, d_out));

// Per sample s and column c of x (S x T x d): (sum_t x[s,t,c] / ||x[s,t]||)^2 at out[s * d + c], the
// squares whose sum over c is the squared norm of the sum of unit token vectors (token_cos's numerator).
// row: row_stats of x. Each column summed over the tokens in order (the terms computed in parallel).
namespace cpu {
template <class R>
void unit_column_square(const R* x, const double* row, int S, int T, int d, double* out) {
  for (int s = 0; s < S; ++s) {
    const std::size_t first = std::size_t(s) * T;
    sim::unit_column_squares(x + first * d, row + first * kRowStats, T, d, out + std::size_t(s) * d);
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(unit_column_square, (const R* d_x, const double* d_row, int S, int T, int d, double* d_out),
                 (d_x, d_row, S, T, d, d_out));

// Per sample, field-major (field f of sample s at out[f * S + s]): a stream's fields (sim/stream_sums.hpp)
// from its row stats and (token_cos; may be null: NaN) unit_column_square's S x d squares: each row added to
// the sample's sim::StreamSums by sim::add_row_stats, each field finished by sim::finish_stream_field.
using sim::kStreamFields;
using sim::StreamField;
#define NORMSIM_FIELD_USING(field, ...) using sim::field;
NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_USING)
#undef NORMSIM_FIELD_USING
namespace cpu {
// Each sample's sums from its rows in token order, finished field by field.
inline void stream_stats_finish(const double* row, const double* colsq, int S, int T, int d, double* out) {
  for (int s = 0; s < S; ++s) {
    const sim::StreamSums sums = sim::stream_sums_of_rows(row + std::size_t(s) * T * kRowStats,
                                                          colsq ? colsq + std::size_t(s) * d : nullptr, T, d);
    for (int f = 0; f < kStreamFields; ++f) out[f * S + s] = sim::finish_stream_field(f, sums, T, d);
  }
}
}  // namespace cpu
NORMSIM_GPU_OP(stream_stats_finish,
               (const double* d_row, const double* d_colsq, int S, int T, int d, double* d_out),
               (d_row, d_colsq, S, T, d, d_out));

// out[i] = double(x[i]): the stream in double for its Gram matrix.
// out[s*n + i] = double(R(x[s*n + i] * R(factor[s]))) for S samples of n: scaled_sum's per-sample scaling
// (gpu/ops.hpp) and widen in one pass, the same bits as the two (the weight-gradient norms' operands).
namespace cpu {
template <class R>
void widen(const R* x, std::size_t n, double* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = double(x[i]);
}

template <class R>
void scaled_widen(const R* x, const double* factor, std::size_t n, int S, double* out) {
  for (std::size_t i = 0; i < n * std::size_t(S); ++i) out[i] = double(R(x[i] * R(factor[i / n])));
}
}  // namespace cpu
NORMSIM_GPU_OP_T(widen, (const R* d_x, std::size_t n, double* d_out), (d_x, n, d_out));
NORMSIM_GPU_OP_T(scaled_widen, (const R* d_x, const double* d_factor, std::size_t n, int S, double* d_out),
                 (d_x, d_factor, n, S, d_out));

// Per sample: sim::effective_rank_of_eigenvalues of its Gram matrix's n eigenvalues (at w[s * n]), NaN when
// the solver failed (info[s] != 0): eff_rank as the CPU backend finishes it (sim/statistic_finish.hpp).
namespace cpu {
inline void spectral_effective_rank(const double* w, const int* info, int n, int S, double* out) {
  for (int s = 0; s < S; ++s)
    out[s] = sim::effective_rank_of_eigenvalues(w + std::size_t(s) * n, n, info[s] == 0);
}
}  // namespace cpu
NORMSIM_GPU_OP(spectral_effective_rank, (const double* d_w, const int* d_info, int n, int S, double* d_out),
               (d_w, d_info, n, S, d_out));

// Per sample ||A^T B||_F from max|A|, max|B| and the sum of the scaled product's squares:
// sim::scaled_frobenius, as the CPU backend finishes it (sim/cpu/frobenius.hpp).
namespace cpu {
inline void frobenius_finish(const double* max_a, const double* max_b, const double* sum, int S,
                             double* out) {
  for (int s = 0; s < S; ++s) out[s] = sim::scaled_frobenius(max_a[s], max_b[s], sum[s]);
}
}  // namespace cpu
NORMSIM_GPU_OP(frobenius_finish,
               (const double* d_max_a, const double* d_max_b, const double* d_sum, int S, double* d_out),
               (d_max_a, d_max_b, d_sum, S, d_out));

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
