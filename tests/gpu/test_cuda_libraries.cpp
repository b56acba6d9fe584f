// cuBLAS and cuSOLVER opened on first use (gpu/cuda_libraries.hpp): without a GPU, a program that links the
// CUDA backend does not load them at start, every function the backend calls resolves in the libraries
// CMake found, and a call goes through to the library. CTest runs each case in a process of its own;
// run as one process (scripts/gpu_validate.sh), the first case runs first.
#include <catch2/catch.hpp>

#include <cublas_v2.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gpu/cuda_libraries.hpp"

namespace {

// Whether a library whose file name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(name) != std::string::npos;
}

}  // namespace

TEST_CASE("a program linking the CUDA backend starts without cuBLAS and cuSOLVER", "[libraries]") {
  CHECK_FALSE(mapped("libcublas"));  // libcublas and libcublasLt
  CHECK_FALSE(mapped("libcusolver"));
}

TEST_CASE("every cuBLAS and cuSOLVER function the backend calls resolves", "[libraries]") {
  const auto unresolved = normsim::gpu::unresolved_cuda_library_functions();
  for (const std::string& why : unresolved) INFO(why);
  CHECK(unresolved.empty());
  CHECK(mapped("libcublasLt"));  // opened by the check, with cuBLAS
  CHECK(mapped("libcusolver"));
}

TEST_CASE("a cuBLAS call goes through to the library on first use", "[libraries]") {
  CHECK_FALSE(std::string(cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED)).empty());  // its text
  CHECK(mapped("libcublas"));
}
