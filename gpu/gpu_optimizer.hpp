// The training loop's optimizer on the device, for a batch of S samples (the twin of sim/optimizer.hpp, its
// specification; docs/design/parametrization.md 3.5): SGD without momentum, or Adam with m and v kept across
// steps (Kingma & Ba 2015, Algorithm 1). As on the CPU, every pass draws W_0 from its Philox counters and the
// optimizer moves it to W_s (apply) from what it keeps per parameter: for Adam the displacement
// D = W_s - W_0, for SGD the sum S of the gradients so far, W_s = W_0 - lr mult^2 S. Each entry of W_s then
// has the CPU's arithmetic, and weights kept or redrawn in the backward (recompute) both read W_s.
//
// Per matrix, the parametrization's learning rate, epsilon and multiplier are the CPU's (sim::param_rule,
// sim::edge_param_rule); the gradient taken into m and v is the parameter's, mult times W_eff's, and W_eff
// moves by mult times its step. A parameter is whatever reports a gradient: sublayer matrices, their biases
// and the edge matrices alike.
//
// Memory per sample: Adam keeps D, m and v (3x the trained weights) and forms one matrix's gradient at a
// time; SGD keeps the pass's gradient and S (2x). gpu/memory_plan.hpp's optimizer_elements counts them.
// Plain C++ header.
#pragma once
#include <cstddef>
#include <map>
#include <tuple>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_parameter_update.hpp"
#include "sim/optimizer.hpp"

namespace normsim::gpu {

template <class R>
class GpuOptimizer final : public GpuParameterUpdate<R> {
 public:
  GpuOptimizer(const sim::StackShape& shape, cublasHandle_t blas, int S);
  void record(int k, sim::WeightKind w, const R* d_a, const R* d_b, int n_in, int n_out,
              sim::Part part = sim::Part::weight) override;
  void record_edge(sim::Edge e, const R* d_a, const R* d_b, int n_in, int n_out) override;
  void seal() override { sealed_ = true; }
  // W_0 -> W_s: W - lr mult^2 S (sgd), W + D (adam); W unchanged before the parameter's first step.
  void apply(int k, sim::WeightKind w, R* d_w, int n_in, int n_out,
             sim::Part part = sim::Part::weight) const override;
  void apply_edge(sim::Edge e, R* d_w, int n_in, int n_out) const override;
  // Step t + 1 from this pass's gradients, then opens the next pass's recording. Throws std::logic_error
  // when a trained parameter reported no gradient.
  void step();

 private:
  struct Param {
    sim::ParamRule rule;
    std::size_t n = 0;               // entries per sample
    DeviceBuffer<R> grad, grad_sum;  // sgd's g and S
    DeviceBuffer<R> disp, m, v;      // adam's D, m and v
    bool recorded = false;           // this pass's gradient is in
    bool stepped = false;            // a step has moved it
  };
  // (sublayer, weight kind, part); an edge matrix e is (-1, e, weight), as on the CPU.
  using Key = std::tuple<int, int, int>;
  // The parameter that takes this pass's gradient (n entries per sample), or null once sealed. Throws
  // std::logic_error on a second gradient in one pass.
  Param* recording(const Key& key, std::size_t n);
  // A^T B per sample into p: sgd's g, or taken into Adam's m and v.
  void take(Param& p, const R* d_a, const R* d_b, int n_in, int n_out);
  void apply_param(const Key& key, R* d_w) const;
  void step_param(Param& p) const;

  const sim::StackShape& shape_;
  vocab::Update kind_;
  cublasHandle_t blas_;
  int S_, T_;
  int t_ = 0;
  bool sealed_ = false;
  std::map<Key, Param> params_;
  DeviceBuffer<R> product_;  // Adam's g = A^T B, reused from matrix to matrix
};

}  // namespace normsim::gpu
