#include "gpu/device_buffer.hpp"

#include <atomic>
#include <cstdint>
#include <string>

#include "gpu/cuda_check.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {
std::atomic<std::size_t> g_in_use{0}, g_peak{0};
}  // namespace

void* device_allocate(std::size_t bytes) {
  void* p = nullptr;
  // Stream-ordered pool allocation: the tape allocates and frees per op, which plain cudaMalloc/cudaFree
  // would serialize.
  const cudaError_t e = cudaMallocAsync(&p, bytes, cudaStreamLegacy);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls are unaffected
    throw std::runtime_error("CUDA out of memory allocating " + std::to_string(bytes) + " bytes (" +
                             std::to_string(g_in_use.load()) + " in use): " + cudaGetErrorString(e));
  }
  const std::size_t now = g_in_use += bytes;
  std::size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void device_free(void* p, std::size_t bytes) noexcept {
  cudaFreeAsync(p, cudaStreamLegacy);
  g_in_use -= bytes;
}

std::size_t device_bytes_in_use() {
  return g_in_use.load();
}
std::size_t device_bytes_peak() {
  return g_peak.load();
}
void reset_device_peak() {
  g_peak = g_in_use.load();
}

namespace {
cudaMemPool_t default_pool() {
  int dev = 0;
  NORMSIM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaMemPool_t pool;
  NORMSIM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  return pool;
}
}  // namespace

void keep_pool_memory() {
  std::uint64_t keep = ~std::uint64_t(0);
  NORMSIM_CUDA_CHECK(cudaMemPoolSetAttribute(default_pool(), cudaMemPoolAttrReleaseThreshold, &keep));
}

std::size_t plannable_device_bytes() {
  NORMSIM_CUDA_CHECK(cudaDeviceSynchronize());  // frees still in flight are counted as the pool's
  std::size_t free_b = 0, total_b = 0;
  NORMSIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const cudaMemPool_t pool = default_pool();
  std::uint64_t reserved = 0, used = 0;
  NORMSIM_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  NORMSIM_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  return free_b + std::size_t(reserved > used ? reserved - used : 0);
}

void copy_to_host(void* dst, const void* d_src, std::size_t bytes) {
  NORMSIM_CUDA_CHECK(cudaMemcpy(dst, d_src, bytes, cudaMemcpyDeviceToHost));
}
void copy_to_device(void* d_dst, const void* src, std::size_t bytes) {
  NORMSIM_CUDA_CHECK(cudaMemcpy(d_dst, src, bytes, cudaMemcpyHostToDevice));
}
void copy_on_device(void* d_dst, const void* d_src, std::size_t bytes) {
  NORMSIM_CUDA_CHECK(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
}
void device_zero(void* d_dst, std::size_t bytes) {
  NORMSIM_CUDA_CHECK(cudaMemset(d_dst, 0, bytes));
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
