// What a CPU branch is given for a parameter update (UpdateHooks). The CUDA backend's twin is GpuContext's
// record, apply and probe (gpu/gpu_branches.hpp); what both devices' branches share: sim/branch_hooks.hpp.
#pragma once
#include "sim/cpu/update_probe.hpp"
#include "sim/cpu/weight_update.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/stack.hpp"

namespace normsim::sim {

// How a branch takes part in a parameter update (sim/weight_update.hpp): a pass records its weight gradients
// into `record` during backward and draws W + dW through `apply` (the one update's first pass records, its
// second applies; a training step does both). Both null: neither.
template <class R>
struct UpdateHooks {
  ParameterUpdate<R>* record = nullptr;
  const ParameterUpdate<R>* apply = nullptr;
  // A training step's coordinate-check sizes (sim/update_probe.hpp): told each matrix `apply` moves and
  // each product's input; null unless a dwx_ or rel_dw_ metric is asked at a step s >= 1.
  CpuUpdateProbe<R>* probe = nullptr;
  // W_0 -> W_s of matrix w of sublayer k, or of edge matrix e, by `apply` (reported to `probe`).
  void apply_weight(int k, WeightKind w, Mat<R>& W) const {
    if (!probe) return apply->apply(k, w, W);
    probe->device().before(W);
    apply->apply(k, w, W);
    probe->stepped(k, int(w), probe->device().held(), W, int(W.rows()), int(W.cols()));
  }
  void apply_edge(Edge e, Mat<R>& W) const {
    if (!probe) return apply->apply_edge(e, W);
    probe->device().before(W);
    apply->apply_edge(e, W);
    probe->stepped(-1, int(e), probe->device().held(), W, int(W.rows()), int(W.cols()));
  }
};

}  // namespace normsim::sim
