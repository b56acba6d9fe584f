// The CUDA backend's device of a training step's update sizes (sim/update_probe.hpp: their definitions, the
// bookkeeping of which matrix is measured when): a batch of S samples, each matrix's sums in a device buffer
// of its own, brought back with one copy per matrix after the step (the probe's finish). The pass's weights
// report each matrix as the optimizer moves it and each product's input (gpu/gpu_weights.hpp,
// gpu/gpu_tape_device.cpp). Plain C++ header.
#pragma once
#include <cstddef>
#include <vector>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "sim/update_probe.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class GpuUpdateSizes {
 public:
  using Buffer = DeviceBuffer<R>;  // S x n_in x n_out
  struct Sums {
    DeviceBuffer<double> device;  // S each: dW.dW, W_0.W_0, sum |x dW|
    std::vector<double> host;     // the same, after read()
    double count = 0;             // entries of x dW a sample
  };

  GpuUpdateSizes(cublasHandle_t blas, int S, int T)
      : blas_(blas), S_(S), T_(T), minus_one_(DeviceBuffer<double>::from_host({-1.0})) {}
  std::size_t entries(const Buffer& b) const { return b.size() / std::size_t(S_); }
  Buffer buffer(std::size_t n) const { return Buffer(n * std::size_t(S_)); }
  void difference(Buffer& dw, const R* d_w0, const R* d_ws, int n_in, int n_out, Sums& s);
  void product(const R* d_x, const Buffer& dw, int n_in, int n_out, Sums& s);
  void read(Sums& s) const { s.host = s.device.to_host(); }
  sim::UpdateSums sums(const Sums& s, int i) const;

 private:
  cublasHandle_t blas_;
  int S_, T_;
  DeviceBuffer<double> minus_one_;  // scaled_sum's factor of W_0 in dW
};

template <class R>
using GpuUpdateProbe = sim::UpdateProbe<GpuUpdateSizes<R>>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
