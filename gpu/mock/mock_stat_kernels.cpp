// The mock's statistics launchers: each runs its CPU twin (gpu/stat_twins.hpp) on the mock's device memory
// (host memory), and counts as one launch (gpu/mock/mock_device.hpp).
#include "gpu/mock/mock_device.hpp"
#include "gpu/stat_kernels.hpp"
#include "gpu/stat_twins.hpp"

namespace normsim::gpu {

template <class R>
void row_stats(const R* d_x, const R* d_next, int rows, int n, double* d_out) {
  mock::count_launch();
  cpu::row_stats(d_x, d_next, rows, n, d_out);
}

template <class R>
void unit_column_square(const R* d_x, const double* d_row, int S, int T, int d, double* d_out) {
  mock::count_launch();
  cpu::unit_column_square(d_x, d_row, S, T, d, d_out);
}

void stream_stats_finish(const double* d_row, const double* d_colsq, int S, int T, int d, double* d_out) {
  mock::count_launch();
  cpu::stream_stats_finish(d_row, d_colsq, S, T, d, d_out);
}

template <class R>
void widen(const R* d_x, std::size_t n, double* d_out) {
  mock::count_launch();
  cpu::widen(d_x, n, d_out);
}

template <class R>
void scaled_widen(const R* d_x, const double* d_factor, std::size_t n, int S, double* d_out) {
  mock::count_launch();
  cpu::scaled_widen(d_x, d_factor, n, S, d_out);
}

void spectral_effective_rank(const double* d_w, const int* d_info, int n, int S, double* d_out) {
  mock::count_launch();
  cpu::spectral_effective_rank(d_w, d_info, n, S, d_out);
}

void frobenius_finish(const double* d_max_a, const double* d_max_b, const double* d_sum, int S,
                      double* d_out) {
  mock::count_launch();
  cpu::frobenius_finish(d_max_a, d_max_b, d_sum, S, d_out);
}

NORMSIM_STAT_KERNEL_INSTANTIATIONS(float)
NORMSIM_STAT_KERNEL_INSTANTIATIONS(double)

}  // namespace normsim::gpu
