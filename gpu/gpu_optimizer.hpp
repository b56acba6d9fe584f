// The training loop's optimizer on the device, for a batch of S samples (the rules, written once:
// sim/training_optimizer.hpp): the device's storage of a parameter and its arithmetic (gpu/ops.hpp's
// adam_accumulate, adam_displace, gradient_step, scaled_sum), and the adapter that GpuContext's record and
// apply call (GpuParameterUpdate). Each entry of W_s has the CPU's arithmetic, and weights kept or redrawn in
// the backward (recompute) both read W_s.
//
// Memory per sample: Adam keeps D, m and v (3x the trained weights) and forms one matrix's gradient at a
// time; SGD keeps the pass's gradient and S (2x). gpu/memory_plan.hpp's optimizer_elements counts them.
// Plain C++ header.
#pragma once
#include <cstddef>
#include <optional>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_parameter_update.hpp"
#include "sim/training_optimizer.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// The device of sim::TrainingOptimizer (its contract: sim/training_optimizer.hpp).
template <class R>
class GpuOptimizerDevice {
 public:
  static constexpr const char* kName = "CUDA optimizer";
  using Extent = std::size_t;  // entries per sample
  struct State {
    std::size_t n = 0;               // entries per sample
    DeviceBuffer<R> grad, grad_sum;  // sgd's g and S
    DeviceBuffer<R> disp, m, v;      // adam's D, m and v
  };
  GpuOptimizerDevice(const sim::StackShape& shape, cublasHandle_t blas, int S)
      : blas_(blas), S_(S), T_(shape.tokens) {}
  void open(State& s, bool adam, std::size_t n) const;
  // The gradient A^T B per sample (A: S x T x n_in, B: S x T x n_out) as one batched GEMM.
  void take(State& s, const std::optional<sim::AdamStep>& moments, double mult, const R* d_a, const R* d_b,
            int n_in, int n_out);
  void sum(State& s) const;
  void displace(State& s, const sim::AdamStep& a, double mult) const;
  void subtract_sum(const State& s, R* d_w, double lr) const;
  void add_displacement(const State& s, R* d_w) const;

 private:
  cublasHandle_t blas_;
  int S_, T_;
  DeviceBuffer<R> product_;  // Adam's g = A^T B, reused from matrix to matrix
};

template <class R>
class GpuOptimizer final : public GpuParameterUpdate<R> {
 public:
  GpuOptimizer(const sim::StackShape& shape, cublasHandle_t blas, int S) : steps_(shape, blas, S) {}
  void record(int k, sim::WeightKind w, const R* d_a, const R* d_b, int n_in, int n_out,
              sim::Part part = sim::Part::weight) override {
    steps_.take(sim::param_key(k, w, part), std::size_t(n_in) * n_out, d_a, d_b, n_in, n_out);
  }
  void record_edge(sim::Edge e, const R* d_a, const R* d_b, int n_in, int n_out) override {
    steps_.take(sim::edge_param_key(e), std::size_t(n_in) * n_out, d_a, d_b, n_in, n_out);
  }
  void seal() override { steps_.seal(); }
  // W_0 -> W_s: W - lr mult^2 S (sgd), W + D (adam); W unchanged before the parameter's first step.
  void apply(int k, sim::WeightKind w, R* d_w, int, int, sim::Part part = sim::Part::weight) const override {
    steps_.apply(sim::param_key(k, w, part), d_w);
  }
  void apply_edge(sim::Edge e, R* d_w, int, int) const override { steps_.apply(sim::edge_param_key(e), d_w); }
  // Step t + 1 from this pass's gradients (sim::TrainingOptimizer::step).
  void step() { steps_.step(); }

 private:
  sim::TrainingOptimizer<GpuOptimizerDevice<R>> steps_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
