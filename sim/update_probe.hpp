// The coordinate-check sizes of each matrix's update at step s >= 1 of the training loop (issue 28 item 3;
// docs/metrics.md rows dwx_* and rel_dw_*), written once for every device, with dW = W_s - W_0 of the stored
// W_eff (the parametrization's multiplier included, sim/training_optimizer.hpp):
//   rel_dw = ||dW||_F / ||W_0||_F              (Frobenius; NaN for a zero-init matrix)
//   dwx    = mean over t, j of |(x dW)[t, j]|   (x the matrix's input in step s's forward)
// dwx is mup's `l1` statistic (microsoft/mup@0518b39 mup/coord_check.py l.43-44: torch.abs(x).mean()) of the
// part of the matrix's output its update makes: the quantity Tensor Programs V's coordinate check asks to
// stay Theta(1) in width. A pass reports each matrix as the optimizer moves it (W_0 to W_s) and each
// product's input; a matrix reported again after its product was measured (a redraw in the backward, a
// checkpointed segment rebuilt: the same W) is not measured again. Memory: dW of each matrix moved and not
// yet multiplied (at most a sublayer's), its buffer reused by later matrices once measured.
//
// A device measures its S samples together (the CPU one sample, sim/cpu/update_probe.hpp; the CUDA backend
// a batch, gpu/gpu_update_probe.hpp) and supplies:
//   Buffer, Sums                              dW of one matrix for the S samples; its sums
//   std::size_t entries(const Buffer&)        entries a sample has in the buffer
//   Buffer buffer(std::size_t n)              a new buffer of n entries a sample
//   void difference(Buffer& dw, w0, ws, n_in, n_out, Sums&)   dW = W_s - W_0 (one rounding in R) into dw's
//                                             storage, and the squared norms of dW and W_0
//   void product(x, const Buffer& dw, n_in, n_out, Sums&)     the sum of |x dW| and its entries' count
//   void read(Sums&)                          makes the sums readable on the host
//   UpdateSums sums(const Sums&, int i) const sample i's
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "sim/update_sizes.hpp"

namespace normsim::sim {

// One matrix's sums for one sample: ||dW||^2, ||W_0||^2, the sum of |x dW| over its `count` entries.
struct UpdateSums {
  double dw_sq = 0, w0_sq = 0, abs_xdw = 0, count = 0;
};

template <class Device>
class UpdateProbe {
 public:
  using Buffer = typename Device::Buffer;

  template <class... Args>
  explicit UpdateProbe(Args&&... device_args) : device_(std::forward<Args>(device_args)...) {}
  // Matrix w of sublayer k (an edge matrix e: k = -1, w = e), n_in x n_out a sample, moved by the optimizer
  // from W_0 (w0) to W_s (ws).
  template <class W>
  void stepped(int k, int w, const W& w0, const W& ws, int n_in, int n_out) {
    Entry& e = entries_[{k, w}];
    if (e.measured) return;
    e.n_in = n_in, e.n_out = n_out;
    const std::size_t n = std::size_t(n_in) * std::size_t(n_out);
    if (device_.entries(e.dw) != n) e.dw = spare(n);
    device_.difference(e.dw, w0, ws, n_in, n_out, e.sums);
  }
  // x, the input of that matrix in this pass: dwx. Ignored unless stepped and not yet measured.
  template <class X>
  void input(int k, int w, const X& x) {
    const auto it = entries_.find({k, w});
    if (it == entries_.end() || it->second.measured) return;
    Entry& e = it->second;
    device_.product(x, e.dw, e.n_in, e.n_out, e.sums);
    e.measured = true;
    spares_.push_back(std::move(e.dw));
  }
  // After the step's pass, before sizes(): the sums made readable (one copy per matrix on a device).
  void finish() {
    for (auto& [key, e] : entries_) device_.read(e.sums);
  }
  // Sample i's sizes (NaN where not measured).
  UpdateSizes sizes(int i, int depth) const {
    UpdateSizes out(depth);
    for (const auto& [key, e] : entries_) {
      const UpdateSums s = device_.sums(e.sums, i);
      const double dwx = e.measured ? s.abs_xdw / s.count : std::numeric_limits<double>::quiet_NaN();
      out.put(key.first, key.second, dwx, std::sqrt(s.dw_sq / s.w0_sq));
    }
    return out;
  }
  Device& device() { return device_; }

 private:
  struct Entry {
    Buffer dw;
    typename Device::Sums sums{};
    int n_in = 0, n_out = 0;
    bool measured = false;
  };
  // A buffer of n entries a sample: a spare of a measured matrix when one has as many, else a new one.
  Buffer spare(std::size_t n) {
    for (auto it = spares_.begin(); it != spares_.end(); ++it)
      if (device_.entries(*it) == n) {
        Buffer b = std::move(*it);
        spares_.erase(it);
        return b;
      }
    return device_.buffer(n);
  }
  Device device_;
  std::map<std::pair<int, int>, Entry> entries_;  // (sublayer, weight kind); an edge matrix e is (-1, e)
  std::vector<Buffer> spares_;
};

}  // namespace normsim::sim
