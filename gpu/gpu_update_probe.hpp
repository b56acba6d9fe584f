// The coordinate-check sizes of a training step's updates on the device, for a batch of S samples (the twin
// of sim/cpu/update_probe.hpp, its specification; docs/metrics.md rows dwx_* and rel_dw_*), with
// dW = W_s - W_0 of the stored W_eff:
//   rel_dw = ||dW||_F / ||W_0||_F, and dwx = mean over t, j of |(x dW)[t, j]|, x the matrix's input in the
// step's first pass. The pass's weights report each matrix as the optimizer moves it and each product's
// input (gpu/gpu_weights.hpp, gpu/gpu_tape_device.cpp); a matrix drawn again in the backward (recompute, or
// a checkpointed segment rebuilt) after its product is the same W and is not measured again. Each sum lands
// in a device buffer of its own and comes back with one copy per matrix after the step (copy_to_host).
// Memory: dW of each matrix moved and not yet multiplied (at most a sublayer's), reused once measured.
// Plain C++ header.
#pragma once
#include <map>
#include <utility>
#include <vector>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "sim/update_sizes.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class GpuUpdateProbe {
 public:
  GpuUpdateProbe(cublasHandle_t blas, int S, int T)
      : blas_(blas), S_(S), T_(T), minus_one_(DeviceBuffer<double>::from_host({-1.0})) {}
  // Matrix w of sublayer k (an edge matrix e: k = -1, w = e), n_in x n_out per sample, moved by the
  // optimizer from W_0 (d_w0) to W_s (d_ws). Ignored once the matrix's product was measured.
  void stepped(int k, int w, const R* d_w0, const R* d_ws, int n_in, int n_out);
  // x (S x T x n_in), the input of that matrix in this pass: dwx. Ignored unless stepped and not measured.
  void input(int k, int w, const R* d_x);
  void copy_to_host();
  // Sample s's sizes (after copy_to_host; NaN where not measured).
  sim::UpdateSizes sizes(int s, int depth) const;

 private:
  struct Entry {
    DeviceBuffer<R> dw;         // S x n_in x n_out until measured
    DeviceBuffer<double> sums;  // S each: dW.dW, W_0.W_0, sum |x dW|
    std::vector<double> host;   // the sums, after copy_to_host
    int n_in = 0, n_out = 0;
    bool measured = false;
  };
  cublasHandle_t blas_;
  int S_, T_;
  DeviceBuffer<double> minus_one_;  // scaled_sum's factor of W_0 in dW
  std::map<std::pair<int, int>, Entry> entries_;
  std::vector<DeviceBuffer<R>> spares_;  // dW buffers of measured matrices, reused by later ones
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
