// The host mock of the CUDA runtime (see include/cuda_runtime_api.h). Memory model: the default pool
// reserves device memory as allocations need it and reuses what was freed (fragmentation is not modelled);
// at a synchronization it gives back what it holds above its release threshold (default 0), as the runtime
// does; cudaMemGetInfo's free memory excludes everything the pool holds, used or not. Fresh allocations are
// filled with 0xFF bytes, a NaN in float and double, so reading memory nobody wrote shows in the results.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "gpu/mock/mock_device.hpp"

namespace {

struct State {
  std::mutex mutex;
  normsim::gpu::mock::MockDevice device;
  cudaError_t last_error = cudaSuccess;
  std::map<const char*, std::size_t> allocations;  // start -> bytes
  std::size_t used = 0, reserved = 0;
  std::uint64_t release_threshold = 0;
  normsim::gpu::mock::Counters counters;
};

State& state() {
  static State s;
  return s;
}

using Lock = std::lock_guard<std::mutex>;

cudaError_t record(State& s, cudaError_t e) {
  if (e != cudaSuccess) s.last_error = e;
  return e;
}

// What a call that needs the context returns: the driver's error, no device, or a failed context creation.
cudaError_t context_status(const State& s) {
  if (s.device.driver_error != cudaSuccess) return s.device.driver_error;
  if (s.device.count == 0) return cudaErrorNoDevice;
  return s.device.context_error;
}

void release_above_threshold(State& s) {
  const std::uint64_t idle = s.reserved - s.used;
  if (idle > s.release_threshold) s.reserved = s.used + std::size_t(s.release_threshold);
}

bool is_device_range(const State& s, const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
  auto it = s.allocations.upper_bound(c);
  if (it == s.allocations.begin()) return false;
  --it;
  return c >= it->first && c + bytes <= it->first + it->second;
}

struct EventTime {
  std::chrono::steady_clock::time_point t;
};

}  // namespace

namespace normsim::gpu::mock {

void configure(const MockDevice& device) {
  const Lock lock(state().mutex);
  state().device = device;
  state().reserved = state().used;  // a new device's pool holds nothing idle
}
const MockDevice& device() {
  return state().device;
}
std::size_t pool_reserved_bytes() {
  const Lock lock(state().mutex);
  return state().reserved;
}
std::size_t pool_used_bytes() {
  const Lock lock(state().mutex);
  return state().used;
}

Counters counters() {
  const Lock lock(state().mutex);
  return state().counters;
}
void reset_counters() {
  const Lock lock(state().mutex);
  state().counters = Counters{};
}
void count_launch() {
  const Lock lock(state().mutex);
  ++state().counters.launches;
}
void count_library_call() {
  const Lock lock(state().mutex);
  ++state().counters.library_calls;
}

}  // namespace normsim::gpu::mock

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInsufficientDriver:
      return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorNoKernelImageForDevice:
      return "no kernel image is available for execution on the device";
  }
  return "unrecognized error code";
}

cudaError_t cudaGetLastError() {
  const Lock lock(state().mutex);
  return std::exchange(state().last_error, cudaSuccess);
}

cudaError_t cudaGetDeviceCount(int* count) {
  const Lock lock(state().mutex);
  *count = 0;
  if (state().device.driver_error != cudaSuccess) return record(state(), state().device.driver_error);
  if (state().device.count == 0) return record(state(), cudaErrorNoDevice);
  *count = state().device.count;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  const Lock lock(state().mutex);
  if (device < 0 || device >= state().device.count) return record(state(), cudaErrorInvalidValue);
  return record(state(), context_status(state()));
}

namespace {
unsigned int& device_flags() {
  static unsigned int flags = cudaDeviceScheduleAuto;
  return flags;
}
}  // namespace

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  const Lock lock(state().mutex);
  if (flags & ~0x07u) return record(state(), cudaErrorInvalidValue);
  device_flags() = flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  *flags = device_flags();
  return cudaSuccess;
}

// The mock claims the CUDA version it was written against (13.0).
cudaError_t cudaDriverGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  const Lock lock(state().mutex);
  const auto& d = state().device;
  if (d.driver_error != cudaSuccess) return record(state(), d.driver_error);
  if (device < 0 || device >= d.count) return record(state(), cudaErrorInvalidValue);
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, "normsim mock device (host memory, CPU twins)", sizeof prop->name - 1);
  prop->totalGlobalMem = d.total_bytes;
  prop->major = d.major;
  prop->minor = d.minor;
  prop->multiProcessorCount = 1;
  return cudaSuccess;
}

cudaError_t cudaFree(void* p) {  // cudaFree(nullptr) is the idiom that creates the context
  const Lock lock(state().mutex);
  if (const cudaError_t e = context_status(state()); e != cudaSuccess) return record(state(), e);
  if (p != nullptr) return record(state(), cudaErrorInvalidValue);  // the backend only uses the pool
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  const Lock lock(state().mutex);
  if (const cudaError_t e = context_status(state()); e != cudaSuccess) return record(state(), e);
  *total_bytes = state().device.total_bytes;
  *free_bytes = state().device.total_bytes - std::min(state().reserved, state().device.total_bytes);
  return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t) {
  State& s = state();
  const Lock lock(s.mutex);
  *p = nullptr;
  if (const cudaError_t e = context_status(s); e != cudaSuccess) return record(s, e);
  const std::size_t idle = s.reserved - s.used, grow = bytes > idle ? bytes - idle : 0;
  if (grow > s.device.total_bytes - std::min(s.reserved, s.device.total_bytes))
    return record(s, cudaErrorMemoryAllocation);
  char* c = static_cast<char*>(std::malloc(std::max<std::size_t>(bytes, 1)));
  if (!c) return record(s, cudaErrorMemoryAllocation);
  std::memset(c, 0xFF, bytes);
  s.allocations[c] = bytes;
  s.reserved += grow;
  s.used += bytes;
  *p = c;
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
  State& s = state();
  const Lock lock(s.mutex);
  const auto it = s.allocations.find(static_cast<const char*>(p));
  if (it == s.allocations.end()) return record(s, cudaErrorInvalidValue);
  s.used -= it->second;
  s.allocations.erase(it);
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  const Lock lock(state().mutex);
  if (const cudaError_t e = context_status(state()); e != cudaSuccess) return record(state(), e);
  if (device != 0) return record(state(), cudaErrorInvalidValue);
  *pool = reinterpret_cast<cudaMemPool_t>(&state());
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  const Lock lock(state().mutex);
  if (pool != reinterpret_cast<cudaMemPool_t>(&state()) || attr != cudaMemPoolAttrReleaseThreshold)
    return record(state(), cudaErrorInvalidValue);
  state().release_threshold = *static_cast<std::uint64_t*>(value);
  return cudaSuccess;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  State& s = state();
  const Lock lock(s.mutex);
  if (pool != reinterpret_cast<cudaMemPool_t>(&s)) return record(s, cudaErrorInvalidValue);
  auto* out = static_cast<std::uint64_t*>(value);
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      *out = s.release_threshold;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent:
      *out = s.reserved;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent:
      *out = s.used;
      return cudaSuccess;
  }
  return record(s, cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, std::size_t min_bytes_to_keep) {
  State& s = state();
  const Lock lock(s.mutex);
  if (pool != reinterpret_cast<cudaMemPool_t>(&s)) return record(s, cudaErrorInvalidValue);
  s.reserved = std::max(s.used, std::min(s.reserved, min_bytes_to_keep));
  return cudaSuccess;
}

// Copies and sets must stay inside one allocation on the device side, as the runtime checks.
namespace {
cudaError_t checked_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((dst_dev && !is_device_range(state(), dst, bytes)) ||
      (src_dev && !is_device_range(state(), src, bytes)))
    return record(state(), cudaErrorInvalidValue);
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}
}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  const Lock lock(state().mutex);
  ++state().counters.blocking_copies;
  return checked_copy(dst, src, bytes, kind);
}

// Streams complete at once, so the copy is done when this returns; the host must still synchronize
// before reading dst on a device, and the backend does.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t) {
  const Lock lock(state().mutex);
  return checked_copy(dst, src, bytes, kind);
}

cudaError_t cudaMallocHost(void** p, std::size_t bytes) {
  *p = std::malloc(std::max<std::size_t>(bytes, 1));
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFreeHost(void* p) {
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaMemset(void* dst, int value, std::size_t bytes) {
  const Lock lock(state().mutex);
  if (!is_device_range(state(), dst, bytes)) return record(state(), cudaErrorInvalidValue);
  std::memset(dst, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  const Lock lock(state().mutex);
  ++state().counters.syncs;
  release_above_threshold(state());
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return cudaDeviceSynchronize();
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = reinterpret_cast<cudaEvent_t>(new EventTime{});
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<EventTime*>(event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  reinterpret_cast<EventTime*>(event)->t = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t) {
  return cudaDeviceSynchronize();
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  const auto* a = reinterpret_cast<EventTime*>(start);
  const auto* b = reinterpret_cast<EventTime*>(end);
  *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
  return cudaSuccess;
}
