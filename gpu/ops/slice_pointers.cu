// The operands of gemm's slices for cuBLAS's pointer-array call: the kernel and its launcher, declared with
// its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void slice_pointers_kernel(const R** ptr, const R* a, long long sa, long long a_step, const R* b,
                                      long long sb, long long b_step, const R* parts, long long part,
                                      int items, int slices) {
  const long long N = (long long)items * slices;
  NORMSIM_GRID_LOOP(e, std::size_t(N)) {
    const long long q = (long long)e, i = q / slices, j = q % slices;
    ptr[q] = a + (i * sa + j * a_step);
    ptr[N + q] = b + (i * sb + j * b_step);
    ptr[2 * N + q] = parts + q * part;
  }
}

}  // namespace

template <class R>
void slice_pointers(const R** d_ptr, const R* a, long long sa, long long a_step, const R* b, long long sb,
                    long long b_step, const R* parts, long long part, int items, int slices) {
  const std::size_t n = std::size_t(items) * std::size_t(slices);
  if (n == 0) return;
  slice_pointers_kernel<<<grid_for(n), kThreads>>>(d_ptr, a, sa, a_step, b, sb, b_step, parts, part, items,
                                                   slices);
  check_launch("slice_pointers_kernel");
}

NORMSIM_INSTANTIATE_OP(slice_pointers)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
