#include "sim/backend.hpp"

#include "sim/cpu_backend.hpp"

namespace normsim::sim {

namespace {
BackendFactory g_cuda_factory = nullptr;
bool (*g_cuda_available)() = nullptr;
}  // namespace

void register_cuda_backend(BackendFactory factory, bool (*device_available)()) {
  g_cuda_factory = factory;
  g_cuda_available = device_available;
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "cpu") return std::make_unique<CpuBackend>(threads);
  if (name == "cuda" || name == "auto") {
    const bool built = g_cuda_factory != nullptr;
    const bool device = built && g_cuda_available && g_cuda_available();
    if (device) return g_cuda_factory(threads);
    if (name == "auto") return std::make_unique<CpuBackend>(threads);
    if (!built)
      throw BackendUnavailable(
          "this normsim was built without CUDA (configure with nvcc available, "
          "NORMSIM_CUDA=ON) — use --backend cpu");
    throw BackendUnavailable("no CUDA device is available on this machine — use --backend cpu");
  }
  throw BackendUnavailable("unknown backend '" + name + "' (auto, cpu, cuda)");
}

}  // namespace normsim::sim
