// Device helpers the op files (gpu/ops/*.cu) share (nvcc only): launch geometry, launch checks, block
// reductions in double, the launchers' explicit instantiations. Inline: each op file includes it.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "gpu/cuda_check.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

inline constexpr int kThreads = 256;  // elementwise and row kernels

// Blocks of kThreads over n entries of one sample, about 16 entries a thread, between 1 and `most`: enough to
// fill the device with a per-sample reduction (sample_max_abs, operand_scales, sample_dot's spread version).
inline unsigned blocks_per_sample(std::size_t n, std::size_t most) {
  const std::size_t per_block = std::size_t(kThreads) * 16;
  return unsigned(std::min<std::size_t>(std::max<std::size_t>((n + per_block - 1) / per_block, 1), most));
}

inline unsigned grid_for(std::size_t n) {
  const std::size_t g = (n + kThreads - 1) / kThreads;
  return unsigned(g < 65535u * 32u ? (g > 0 ? g : 1) : 65535u * 32u);
}

// Threads of a block that walks one row of n entries (row norms, softmax, the statistics' rows).
inline int row_threads(int n) {
  return n >= 512 ? 256 : (n >= 128 ? 128 : 32);
}

inline void check_launch(const char* name) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw_cuda_error(name, cudaGetErrorString(e), __FILE__, __LINE__);
}

// Sum of v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
__device__ inline double block_sum(double v) {
  __shared__ double part[32];
  __shared__ double total;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // part/total may still be read from a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x >> 5) ? part[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

template <class R>
__device__ inline R block_max(R v) {
  __shared__ R part[32];
  __shared__ R total;
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < int(blockDim.x >> 5) ? part[lane] : part[0];
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

// A block's share of a per-sample maximum of |x| (sample_max_abs, operand_scales): x[i] for i = first,
// first + stride, ... below n, each thread its own; every thread gets the bits of the block's largest
// finite |x|, or the quiet NaN's bits where it saw an entry that is not finite. The bits of non-negative
// doubles order as their values and the quiet NaN 0x7FF8... lies above +infinity's, so an atomicMax of
// these bits over the blocks (from +0: all bits clear) is exact whatever the grid.
template <class R>
__device__ unsigned long long block_max_abs_bits(const R* x, std::size_t first, std::size_t n,
                                                 std::size_t stride) {
  double m = 0, bad = 0;
  for (std::size_t i = first; i < n; i += stride) {
    const double v = fabs(double(x[i]));
    if (isfinite(v))
      m = fmax(m, v);
    else
      bad += 1;
  }
  m = block_max(m);
  bad = block_sum(bad);
  return bad > 0 ? 0x7FF8'0000'0000'0000ull : (unsigned long long)__double_as_longlong(m);
}

// Whether this block is the last of its grid to get here, counted in *finished (every thread of the block
// gets the answer). What thread 0 of each block wrote before is fenced before it counts itself, and the last
// block fences again before it reads the others' writes; it must reset *finished to 0 when done, so that the
// next launch counts from 0 (one launch at a time: the backend launches on the legacy stream only).
__device__ inline bool last_block_to_finish(unsigned int* finished) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(finished, 1u) == gridDim.x * gridDim.y * gridDim.z - 1;
    if (last) __threadfence();  // acquire: the others' writes before this block reads them
  }
  __syncthreads();
  return last;
}

#define NORMSIM_GRID_LOOP(i, n)                                                     \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::size_t(blockDim.x) * gridDim.x)

// A launcher template's definitions for float and double (its declaration, NORMSIM_GPU_OP_T in gpu/ops.hpp
// or gpu/stat_ops.hpp, is the one place its parameters are written; decltype takes them from there).
#define NORMSIM_INSTANTIATE_OP(name)          \
  template decltype(name<float>) name<float>; \
  template decltype(name<double>) name<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
