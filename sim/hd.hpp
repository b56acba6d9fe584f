// NORMSIM_HD marks per-element math written once for the CPU loop and the CUDA kernel (style.md, pbrt's
// PBRT_CPU_GPU): empty in a plain C++ build, __host__ __device__ under nvcc.
#pragma once
#if defined(__CUDACC__)
#define NORMSIM_HD __host__ __device__ inline
#else
#define NORMSIM_HD inline
#endif
