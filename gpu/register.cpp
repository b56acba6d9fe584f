#include "gpu/register.hpp"

#include <memory>

#include "gpu/cuda_backend.hpp"

namespace normsim::gpu {

namespace {
std::unique_ptr<sim::Backend> make_cuda_backend(int threads) {
  return std::make_unique<CudaBackend>(threads);
}
bool device_available() {
  return cuda_device_count() > 0;
}
}  // namespace

void register_backend() {
  sim::register_cuda_backend(&make_cuda_backend, &device_available);
}

}  // namespace normsim::gpu
