// cuBLAS and cuSOLVER are opened when the CUDA backend first calls them (gpu/cuda_libraries.cpp), not when a
// program linking normsim_gpu starts: their static initialisers, libcublasLt's above all, cost about 0.45 s
// of every process start on a machine without a GPU as on one with (`normsim --version` 0.46 s against
// 0.01 s for a build without CUDA; perf: 38 % of it in libcublasLt, 47 % page faults), which every command,
// every `import normsim` and every run on the CPU paid. A program that never runs the CUDA backend never
// loads them; one that does loads them at its first cuBLAS or cuSOLVER call.
#pragma once
#include <string>
#include <vector>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// For each cuBLAS and cuSOLVER function the backend calls that cannot be found, why (the library that does
// not open, or the symbol it lacks); empty when every one resolves. Loads the libraries (tests, and
// scripts/gpu_validate.sh's first step).
std::vector<std::string> unresolved_cuda_library_functions();

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
