// The inner dimension's slices of a product summed: the kernel and its launcher, declared with its reference
// in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One thread per output entry: its slices summed in double in the reference's order, rounded once.
template <class R>
__global__ void sum_slices_kernel(R* c, const R* parts, int slices, int items, int m, int n, int ldc,
                                  long long stride_c, bool accumulate) {
  const std::size_t part = std::size_t(m) * std::size_t(n);
  NORMSIM_GRID_LOOP(e, part * items) {
    const std::size_t i = e / part, rj = e % part, r = rj / std::size_t(n), j = rj % std::size_t(n);
    R& out = c[i * std::size_t(stride_c) + r * std::size_t(ldc) + j];
    double acc = accumulate ? double(out) : 0.0;
    const R* p = parts + i * std::size_t(slices) * part + rj;
    for (int s = 0; s < slices; ++s) acc += double(p[std::size_t(s) * part]);
    out = R(acc);
  }
}

}  // namespace

template <class R>
void sum_slices(R* d_c, const R* d_parts, int slices, int items, int m, int n, int ldc, long long stride_c,
                bool accumulate) {
  const std::size_t entries = std::size_t(m) * std::size_t(n) * std::size_t(items);
  if (entries == 0) return;
  sum_slices_kernel<<<grid_for(entries), kThreads>>>(d_c, d_parts, slices, items, m, n, ldc, stride_c,
                                                     accumulate);
  check_launch("sum_slices_kernel");
}

NORMSIM_INSTANTIATE_OP(sum_slices)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
