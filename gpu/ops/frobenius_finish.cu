// ||A^T B||_F from its scaled sum and the two maxima: the kernel and its launcher, declared with its
// reference in gpu/stat_ops.hpp.
#include <math_constants.h>

#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {

namespace {

__global__ void frobenius_finish_kernel(const double* max_a, const double* max_b, const double* sum, int S,
                                        double* out) {
  NORMSIM_GRID_LOOP(s, std::size_t(S)) {
    const double ma = max_a[s], mb = max_b[s];
    int ea = 0, eb = 0;
    if (!isfinite(ma) || !isfinite(mb)) {
      out[s] = CUDART_NAN;
    } else if (ma == 0 || mb == 0) {
      out[s] = 0;
    } else {
      frexp(ma, &ea), frexp(mb, &eb);
      out[s] = ldexp(sqrt(sum[s] < 0 ? 0.0 : sum[s]), ea + eb);
    }
  }
}

}  // namespace

void frobenius_finish(const double* d_max_a, const double* d_max_b, const double* d_sum, int S,
                      double* d_out) {
  if (S == 0) return;
  frobenius_finish_kernel<<<grid_for(std::size_t(S)), kThreads>>>(d_max_a, d_max_b, d_sum, S, d_out);
  check_launch("frobenius_finish_kernel");
}

}  // namespace normsim::gpu
