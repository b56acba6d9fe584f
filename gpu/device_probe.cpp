#include "gpu/device_probe.hpp"

#include <cuda_runtime_api.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "gpu/cuda_check.hpp"

#ifndef NORMSIM_GPU_ARCHS
#error "NORMSIM_GPU_ARCHS (the built CUDA architectures) must be defined by the build"
#endif

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

int cuda_device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && why) *why = "cudaGetDeviceCount reports 0 devices";
  return n;
}

std::string cuda_device_name() {
  int dev = 0;
  NORMSIM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  NORMSIM_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  return p.name;
}

std::string cuda_device_description() {
  int dev = 0, driver = 0, runtime = 0;
  NORMSIM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  NORMSIM_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  NORMSIM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  NORMSIM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", double(p.totalGlobalMem) / double(1ull << 30));
  return std::string(p.name) + " (compute capability " + std::to_string(p.major) + "." +
         std::to_string(p.minor) + ", " + std::to_string(p.multiProcessorCount) + " SMs, " + memory +
         "; CUDA driver " + version(driver) + ", runtime " + version(runtime) + ")";
}

bool built_for(int major, int minor, std::string_view archs) {
  const int cc = 10 * major + minor;
  while (!archs.empty()) {
    const std::size_t comma = archs.find(',');
    const std::string_view entry = archs.substr(0, comma);
    archs = comma == std::string_view::npos ? std::string_view{} : archs.substr(comma + 1);
    int arch = 0;
    const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), arch);
    if (ec != std::errc{}) continue;
    const std::string_view kind(end, entry.data() + entry.size() - end);
    const bool sass = kind != "-virtual", ptx = kind != "-real";
    if (sass && arch / 10 == major && arch <= cc) return true;
    if (ptx && arch <= cc) return true;
  }
  return false;
}

unsigned host_wait_flags(const char* value) {
  const std::string_view v = value ? value : "";
  if (v.empty() || v == "auto") return cudaDeviceScheduleAuto;
  if (v == "spin") return cudaDeviceScheduleSpin;
  if (v == "yield") return cudaDeviceScheduleYield;
  if (v == "blocking") return cudaDeviceScheduleBlockingSync;
  throw std::invalid_argument("NORMSIM_CUDA_SYNC: auto, spin, yield or blocking, not '" + std::string(v) +
                              "'");
}

namespace {
// Applied before the context exists (a context another library made first keeps its own mode: then a note).
void apply_host_wait() {
  const unsigned flags = host_wait_flags(std::getenv("NORMSIM_CUDA_SYNC"));
  if (flags == cudaDeviceScheduleAuto) return;
  if (cudaSetDeviceFlags(flags) != cudaSuccess) {
    (void)cudaGetLastError();
    std::fprintf(stderr, "normsim: NORMSIM_CUDA_SYNC not applied (the CUDA context already exists)\n");
  }
}
}  // namespace

bool cuda_device_usable(std::string* why) {
  std::string cause;
  if (cuda_device_count(&cause) == 0) {
    if (why) *why = "no CUDA device: " + cause;
    return false;
  }
  cudaDeviceProp p{};
  cudaError_t e = cudaGetDeviceProperties(&p, 0);
  if (e == cudaSuccess && !built_for(p.major, p.minor, NORMSIM_GPU_ARCHS)) {
    if (why)
      *why = std::string(p.name) + " has compute capability " + std::to_string(p.major) + "." +
             std::to_string(p.minor) + ", which none of the built architectures (" + NORMSIM_GPU_ARCHS +
             ") runs on; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(10 * p.major + p.minor);
    return false;
  }
  if (e == cudaSuccess) e = cudaSetDevice(0);
  if (e == cudaSuccess) apply_host_wait();
  if (e == cudaSuccess) e = cudaFree(nullptr);  // creates the context
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = std::string("creating a CUDA context on device 0 failed: ") + cudaGetErrorString(e);
    return false;
  }
  return true;
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
