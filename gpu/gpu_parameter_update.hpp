// What a pass on the device asks of a parameter update (the twin of sim::ParameterUpdate, through
// GpuContext's record and apply): the one update of steps = 0 (gpu/gpu_weight_update.hpp) or the training
// loop's optimizer (gpu/gpu_optimizer.hpp). A parameter is (sublayer k, matrix w, part) or an edge matrix;
// the update keeps whatever parameters report to it. Pointers are device pointers, S samples each.
// Plain C++ header.
#pragma once
#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class GpuParameterUpdate {
 public:
  virtual ~GpuParameterUpdate() = default;
  // The loss's gradient of matrix w (n_in x n_out) of sublayer k as A^T B, A: S x T x n_in, B: S x T x n_out
  // (taken in now: the caller may free them); of its bias, A is a column of ones (n_in = 1). Ignored when
  // not needed or after seal().
  virtual void record(int k, sim::WeightKind w, const R* d_a, const R* d_b, int n_in, int n_out,
                      sim::Part part = sim::Part::weight) = 0;
  // The same for the edge matrix W_e (sim/edges.hpp).
  virtual void record_edge(sim::Edge e, const R* d_a, const R* d_b, int n_in, int n_out) = 0;
  // The loss's backward is done: later reverse passes (the Jacobian probes) record nothing.
  virtual void seal() = 0;
  // W (S x n_in x n_out, as drawn at init) += dW in place, or a bias (S x 1 x n_out). Throws
  // std::logic_error when a needed gradient was not recorded.
  virtual void apply(int k, sim::WeightKind w, R* d_w, int n_in, int n_out,
                     sim::Part part = sim::Part::weight) const = 0;
  virtual void apply_edge(sim::Edge e, R* d_w, int n_in, int n_out) const = 0;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
