// A routed MLP (mixture of experts) on the CPU, for one sample: the MLP branch when moe_experts = E > 0.
//   z = u Wr (T x E, Wr the router, d x E), g[t] = the gates of z[t] (sim/moe_gate.hpp: top-k of a softmax,
//   renormalized or not), F(u)[t] = sum_e g_e[t] MLP_e(u)[t],
// each expert MLP_e the configured MLP (activation, hidden width) with matrices WeightId{w1|w2|wgate, e}, so
// expert 0 has the dense MLP's weights and E = 1, k = 1 renormalized is the dense MLP bit for bit.
// Cost model: an expert runs on every token (gates 0 where it is not selected), skipped only when no token
// selects it; the CUDA backend computes the same (gpu/gpu_moe.cpp).
#pragma once
#include <memory>

#include "sim/cpu/cpu_branches.hpp"

namespace normsim::sim {

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_moe(const StackShape& s, const Placement& p, int k, SampleKey key);

}  // namespace normsim::sim
