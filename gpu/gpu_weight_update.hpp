// The parameter update W -> W + dW on the device, for a batch of S samples (the rules, written once:
// sim/single_update.hpp; metric output_change): the device's arithmetic and the adapter that GpuContext's
// record and apply call (GpuParameterUpdate).
//   random:    G drawn on the device from the stream update_base + w of (seed, sample, sublayer), added to W
//              scaled per sample by update_scale ||W||_F / ||G||_F (random_update_scales);
//   sgd, adam: from the loss's gradient g = A^T B of the first backward (A the matrix's input, B the gradient
//              of its output), then gradient_step. What is kept per (sublayer, matrix) is g itself or the
//              factors A and B, whichever is smaller (gradient_by_factors): g is then one GEMM when applied.
// With steps > 0 it is inactive: the training loop's optimizer (gpu/gpu_optimizer.hpp) moves the weights.
// Plain C++ header.
#pragma once
#include <cstdint>
#include <optional>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_parameter_update.hpp"
#include "sim/config.hpp"
#include "sim/single_update.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// The device of sim::SingleUpdate (its contract: sim/single_update.hpp), on a batch of S samples.
template <class R>
class GpuUpdateDevice {
 public:
  static constexpr const char* kName = "CUDA weight update";
  struct Gradient {
    DeviceBuffer<R> a, b, g;  // the factors, or the product
  };
  struct Matrix {  // S x n_in x n_out on the device
    R* d_w;
    int n_in, n_out;
  };
  GpuUpdateDevice(const sim::Config& c, cublasHandle_t blas, int S, const std::uint32_t* d_samples)
      : seed_(c.seed), blas_(blas), S_(S), T_(c.tokens), d_samples_(d_samples) {}
  // A^T B (A: S x T x n_in, B: S x T x n_out), copied or multiplied now: the caller may free them.
  void keep(Gradient& kept, const R* d_a, const R* d_b, int n_in, int n_out) const;
  bool has(const Gradient& g, const Matrix&) const { return !g.g.empty() || !g.a.empty(); }
  void descend(const Matrix& W, const Gradient& g, double lr, std::optional<double> adam_eps) const;
  void add_random(const Matrix& W, std::uint32_t k, sim::Stream stream, double scale) const;

 private:
  // g (S x n_in x n_out) = A^T B per sample.
  void product(const R* d_a, const R* d_b, R* d_g, int n_in, int n_out) const;
  std::uint64_t seed_;
  cublasHandle_t blas_;
  int S_, T_;
  const std::uint32_t* d_samples_;
};

template <class R>
class GpuWeightUpdate final : public GpuParameterUpdate<R> {
 public:
  GpuWeightUpdate(const sim::Config& c, cublasHandle_t blas, int S, const std::uint32_t* d_samples)
      : update_(c, c.steps > 0 ? vocab::Update::none : c.update, c, blas, S, d_samples) {}
  bool active() const { return update_.active(); }
  // Whether apply() needs the first backward's weight gradients (sgd, adam).
  bool needs_gradients() const { return update_.needs_gradients(); }
  void record(int k, sim::WeightKind w, const R* d_a, const R* d_b, int n_in, int n_out,
              sim::Part part = sim::Part::weight) override {
    update_.keep(k, w, part, d_a, d_b, n_in, n_out);
  }
  void seal() override { update_.seal(); }
  void apply(int k, sim::WeightKind w, R* d_w, int n_in, int n_out,
             sim::Part part = sim::Part::weight) const override {
    update_.apply(k, w, part, typename GpuUpdateDevice<R>::Matrix{d_w, n_in, n_out});
  }
  void record_edge(sim::Edge e, const R* d_a, const R* d_b, int n_in, int n_out) override {
    update_.keep_edge(e, d_a, d_b, n_in, n_out);
  }
  void apply_edge(sim::Edge e, R* d_w, int n_in, int n_out) const override {
    update_.apply_edge(e, typename GpuUpdateDevice<R>::Matrix{d_w, n_in, n_out});
  }

 private:
  sim::SingleUpdate<GpuUpdateDevice<R>> update_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
