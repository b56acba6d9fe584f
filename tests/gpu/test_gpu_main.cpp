// The GPU tests' main: skips (exit 77, CTest's SKIP_RETURN_CODE) when there is no usable CUDA device, so CI
// machines without one build the tests and report them as skipped rather than passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "gpu/cuda_backend.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (!normsim::gpu::cuda_device_usable(&why)) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  std::printf("device: %s\n", normsim::gpu::cuda_device_name().c_str());
  return Catch::Session().run(argc, argv);
}
