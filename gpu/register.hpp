// Public entry of the two builds of gpu/: each makes sim::make_backend able to build its backend. Call once
// at startup (the CLI and the Python module do). Declared outside the builds' inline namespaces
// (NORMSIM_GPU_ABI), so a program linking both builds calls each by this name.
#pragma once

namespace normsim::gpu {

// The CUDA backend (BackendChoice::cuda, and auto's first choice): in a build with NORMSIM_HAVE_CUDA,
// defined by normsim_gpu.
void register_backend();

// The reference device (BackendChoice::reference): the same backend code on gpu/mock/, every kernel its
// plain-loop reference, cuBLAS a plain-loop GEMM and cuSOLVER Eigen's eigensolver, on host memory
// (docs/gpu.md, "The reference device"). Defined by normsim_gpu_mock, which every build with
// NORMSIM_CUDA_MOCK has.
void register_reference_backend();

}  // namespace normsim::gpu
