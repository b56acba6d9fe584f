#include "gpu/register.hpp"

#include <memory>

#include "gpu/cuda_backend.hpp"
#ifdef NORMSIM_CUDA_MOCK
#include "gpu/mock/mock_device.hpp"
#endif

namespace normsim::gpu {

namespace {
std::unique_ptr<sim::Backend> make_this_backend(int threads) {
  return std::make_unique<CudaBackend>(threads);
}
}  // namespace

#ifdef NORMSIM_CUDA_MOCK
void register_reference_backend() {
  sim::register_reference_backend(&make_this_backend);
}

void mock::register_as_cuda_backend() {
  sim::register_cuda_backend(&make_this_backend, &cuda_device_usable);
}
#else
void register_backend() {
  sim::register_cuda_backend(&make_this_backend, &cuda_device_usable);
}
#endif

}  // namespace normsim::gpu
