#include "sim/backend.hpp"

#include <omp.h>

#include <stdexcept>

namespace normsim::sim {

namespace {
BackendFactory g_cpu_factory = nullptr;
BackendFactory g_cuda_factory = nullptr;
BackendFactory g_reference_factory = nullptr;
DeviceProbe g_cuda_usable = nullptr;

// Why the CUDA backend cannot run here, or empty when it can be tried.
std::string cuda_unusable_reason() {
  if (!g_cuda_factory)
    return "this normsim was built without CUDA (configure with nvcc available, NORMSIM_CUDA=ON)";
  std::string why;
  if (g_cuda_usable && !g_cuda_usable(&why)) return why.empty() ? "no usable CUDA device" : why;
  return {};
}

std::unique_ptr<Backend> make_cpu_backend(int threads) {
  if (!g_cpu_factory)
    throw std::logic_error(
        "the CPU backend is not registered: call sim::cpu::register_backend() "
        "(sim/cpu/register.hpp) at startup");
  return g_cpu_factory(threads);
}
}  // namespace

void register_cpu_backend(BackendFactory factory) {
  g_cpu_factory = factory;
}

void register_reference_backend(BackendFactory factory) {
  g_reference_factory = factory;
}

bool reference_backend_registered() {
  return g_reference_factory != nullptr;
}

void register_cuda_backend(BackendFactory factory, DeviceProbe device_usable) {
  g_cuda_factory = factory;
  g_cuda_usable = device_usable;
}

int resolved_threads(int threads) {
  return threads > 0 ? threads : omp_get_max_threads();
}

std::unique_ptr<Backend> make_backend(vocab::BackendChoice choice, int threads,
                                      std::string* fallback_reason) {
  if (threads < 0 || threads > kMaxThreads)
    throw std::invalid_argument("threads " + std::to_string(threads) + ": expected 0 (all cores) to " +
                                std::to_string(kMaxThreads));
  if (choice == vocab::BackendChoice::cpu) return make_cpu_backend(threads);
  if (choice == vocab::BackendChoice::reference) {
    if (!g_reference_factory)
      throw BackendUnavailable(
          "this normsim was built without the reference device (configure with NORMSIM_CUDA_MOCK=ON)");
    return g_reference_factory(threads);
  }
  std::string why = cuda_unusable_reason();
  if (why.empty()) {
    try {
      return g_cuda_factory(threads);
    } catch (const BackendUnavailable& e) {  // the device failed at setup (context, cuBLAS)
      why = e.what();
    }
  }
  if (choice == vocab::BackendChoice::cuda)
    throw BackendUnavailable(
        why + " — choose the backend cpu" +
        (g_reference_factory ? " (or reference: the CUDA backend's code on the host)" : ""));
  if (fallback_reason && g_cuda_factory) *fallback_reason = why;
  return make_cpu_backend(threads);
}

}  // namespace normsim::sim
