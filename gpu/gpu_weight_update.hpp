// The parameter update W -> W + dW on the device, for a batch of S samples (the twin of
// sim/weight_update.hpp, its specification; metric output_change):
//   random:    G drawn on the device from the stream update_base + w of (seed, sample, sublayer), added to W
//              scaled per sample by update_scale ||W||_F / ||G||_F (random_update_scales);
//   sgd, adam: from the loss's gradient g = A^T B of the first backward (A the matrix's input, B the gradient
//              of its output), then gradient_step. What is recorded per (sublayer, matrix) is g itself or the
//              factors A and B, whichever is smaller (gradient_by_factors): g is then one GEMM when applied.
// With steps > 0 it is inactive: the training loop's optimizer (gpu/gpu_optimizer.hpp) moves the weights.
// Plain C++ header.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_parameter_update.hpp"
#include "sim/config.hpp"
#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::gpu {

template <class R>
class GpuWeightUpdate final : public GpuParameterUpdate<R> {
 public:
  GpuWeightUpdate(const sim::Config& c, cublasHandle_t blas, int S, const std::uint32_t* d_samples);
  bool active() const { return kind_ != vocab::Update::none; }
  // Whether apply() needs the first backward's weight gradients (sgd, adam).
  bool needs_gradients() const;
  // The loss's gradient of matrix w (n_in x n_out) of sublayer k as A^T B, A: S x T x n_in, B: S x T x n_out
  // (copied or multiplied now: the caller may free them); of its bias, A is a column of ones (n_in = 1).
  // Ignored when not needed or after seal().
  void record(int k, sim::WeightKind w, const R* d_a, const R* d_b, int n_in, int n_out,
              sim::Part part = sim::Part::weight) override;
  // The loss's backward is done (as sim::WeightUpdate::seal).
  void seal() override { sealed_ = true; }
  // W (S x n_in x n_out) += dW in place, or a bias (S x 1 x n_out). Throws std::logic_error when a needed
  // gradient was not recorded.
  void apply(int k, sim::WeightKind w, R* d_w, int n_in, int n_out,
             sim::Part part = sim::Part::weight) const override;
  // The same for the edge matrix W_e (sim/edges.hpp): moved by sgd and adam only, as on the CPU.
  void record_edge(sim::Edge e, const R* d_a, const R* d_b, int n_in, int n_out) override;
  void apply_edge(sim::Edge e, R* d_w, int n_in, int n_out) const override;

 private:
  // g (S x n_in x n_out) = A^T B per sample.
  void product(const R* d_a, const R* d_b, R* d_g, int n_in, int n_out) const;
  struct Recorded {
    DeviceBuffer<R> a, b, g;  // the factors, or the product
  };
  void record_into(Recorded& r, const R* d_a, const R* d_b, int n_in, int n_out) const;
  // W += the sgd or adam step of the recorded gradient; throws std::logic_error naming `what` without one.
  void step(const Recorded& r, R* d_w, int n_in, int n_out, const std::string& what) const;
  vocab::Update kind_;
  double lr_, scale_, eps_;
  std::uint64_t seed_;
  cublasHandle_t blas_;
  int S_, T_;
  const std::uint32_t* d_samples_;
  bool sealed_ = false;
  // per sublayer, by Part, then WeightKind
  std::vector<std::array<Recorded, sim::kParts * sim::kWeightKinds>> grads_;
  std::array<Recorded, sim::kEdges> edge_grads_;
};

}  // namespace normsim::gpu
