#include "sim/backend.hpp"

#include "sim/cpu_backend.hpp"

namespace normsim::sim {

namespace {
BackendFactory g_cuda_factory = nullptr;
DeviceProbe g_cuda_usable = nullptr;

// Why the CUDA backend cannot run here, or empty when it can be tried.
std::string cuda_unusable_reason() {
  if (!g_cuda_factory)
    return "this normsim was built without CUDA (configure with nvcc available, NORMSIM_CUDA=ON)";
  std::string why;
  if (g_cuda_usable && !g_cuda_usable(&why)) return why.empty() ? "no usable CUDA device" : why;
  return {};
}
}  // namespace

void register_cuda_backend(BackendFactory factory, DeviceProbe device_usable) {
  g_cuda_factory = factory;
  g_cuda_usable = device_usable;
}

std::unique_ptr<Backend> make_backend(vocab::BackendChoice choice, int threads,
                                      std::string* fallback_reason) {
  if (threads < 0 || threads > kMaxThreads)
    throw std::invalid_argument("threads " + std::to_string(threads) + ": expected 0 (all cores) to " +
                                std::to_string(kMaxThreads));
  if (choice == vocab::BackendChoice::cpu) return std::make_unique<CpuBackend>(threads);
  std::string why = cuda_unusable_reason();
  if (why.empty()) {
    try {
      return g_cuda_factory(threads);
    } catch (const BackendUnavailable& e) {  // the device failed at setup (context, cuBLAS)
      why = e.what();
    }
  }
  if (choice == vocab::BackendChoice::cuda) throw BackendUnavailable(why + " — use --backend cpu");
  if (fallback_reason && g_cuda_factory) *fallback_reason = why;
  return std::make_unique<CpuBackend>(threads);
}

}  // namespace normsim::sim
