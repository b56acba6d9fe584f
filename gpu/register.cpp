#include "gpu/register.hpp"

#include <memory>

#include "gpu/cuda_backend.hpp"

namespace normsim::gpu {

namespace {
std::unique_ptr<sim::Backend> make_cuda_backend(int threads) {
  return std::make_unique<CudaBackend>(threads);
}
}  // namespace

void register_backend() {
  sim::register_cuda_backend(&make_cuda_backend, &cuda_device_usable);
}

}  // namespace normsim::gpu
