// How a GPU op's launcher is declared: once, next to its reference (gpu/ops.hpp, gpu/stat_ops.hpp), as
// NORMSIM_GPU_OP(foo, (params), (args)), or NORMSIM_GPU_OP_T for a template over the real type R. The real
// build declares `gpu::foo` (its kernel and definition in gpu/ops/, which instantiates it for float and
// double with NORMSIM_INSTANTIATE_OP); the mock build (NORMSIM_CUDA_MOCK) defines it instead as one counted
// launch that runs the reference `gpu::cpu::foo` on the mock's device memory, which is host memory. So the
// mock tests the backend's orchestration, and tests/gpu/test_gpu_ops.cpp the kernels against the same
// references on a device. Plain C++ (no CUDA): the callers include it.
#pragma once

#ifdef NORMSIM_CUDA_MOCK
#include "gpu/mock/mock_device.hpp"

// static_assert(true) takes the `;` that ends each use, so a use reads as a declaration in both builds.
#define NORMSIM_GPU_OP(name, params, args) \
  inline void name params {                \
    mock::count_launch();                  \
    cpu::name args;                        \
  }                                        \
  static_assert(true)
#else
#define NORMSIM_GPU_OP(name, params, args) void name params
#endif

#define NORMSIM_GPU_OP_T(name, params, args) \
  template <class R>                         \
  NORMSIM_GPU_OP(name, params, args)
