#include "sim/cpu/register.hpp"

#include <memory>

#include "sim/backend.hpp"
#include "sim/cpu/cpu_backend.hpp"

namespace normsim::sim::cpu {

namespace {
std::unique_ptr<Backend> make_cpu_backend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}
}  // namespace

void register_backend() {
  register_cpu_backend(&make_cpu_backend);
}

}  // namespace normsim::sim::cpu
