// Definitions of every metric (docs/metrics.md is generated from this table by `normsim list metrics`).
#include <array>

#include "sim/metrics.hpp"

namespace normsim::sim {

namespace {
constexpr auto S = MetricIndex::stream;
constexpr auto K = MetricIndex::sublayer;
constexpr auto F = MetricPass::forward;
constexpr auto B = MetricPass::backward;
constexpr std::array<MetricInfo, metric::count> kTable{{
    {"act_sq", S, F, "mean over tokens t and coordinates i of x_l[t,i]^2 (the stream's second moment v_l)"},
    {"grad_sq", S, B, "mean over t,i of (dLoss/dx_l[t,i])^2"},
    {"cos_next", K, F, "mean over tokens of cos(x_k[t], x_{k+1}[t])"},
    {"token_cos", S, F,
     "mean over token pairs t != s of cos(x_l[t], x_l[s]); undefined (NaN) with one token or a zero token"},
    {"act_mean_abs", S, F, "mean over t,i of |x_l[t,i]|"},
    {"act_max_abs", S, F, "max over t,i of |x_l[t,i]| (massive activations)"},
    {"branch_sq", K, F,
     "mean over t,i of F_k[t,i]^2, the raw output of branch k before any output norm or scale"},
    {"rel_update", K, F, "mean over tokens of ||x_{k+1}[t] - x_k[t]|| / ||x_k[t]||"},
    {"eff_rank", S, F,
     "exp(entropy of s/sum(s)), s the singular values of the T x d matrix x_l (Roy & Vetterli)"},
    {"gradw_w1", K, B,
     "Frobenius norm of dLoss/dW1 of sublayer k (MLP input matrix; SwiGLU's up projection)"},
    {"gradw_w2", K, B, "Frobenius norm of dLoss/dW2 of sublayer k (MLP output matrix)"},
    {"gradw_wgate", K, B, "Frobenius norm of dLoss/dWgate of sublayer k (SwiGLU gate matrix)"},
    {"gradw_wq", K, B, "Frobenius norm of dLoss/dWq of sublayer k (attention query matrix)"},
    {"gradw_wk", K, B, "Frobenius norm of dLoss/dWk of sublayer k (attention key matrix)"},
    {"gradw_wv", K, B, "Frobenius norm of dLoss/dWv of sublayer k (attention value matrix)"},
    {"gradw_wo", K, B, "Frobenius norm of dLoss/dWo of sublayer k (attention output matrix)"},
    {"gradw_cq", K, B,
     "Frobenius norm of dLoss/dWq of the decoder's cross-attention sublayer k (query from the stream)"},
    {"gradw_ck", K, B,
     "Frobenius norm of dLoss/dWk of the decoder's cross-attention sublayer k (key from the encoder output)"},
    {"gradw_cv", K, B,
     "Frobenius norm of dLoss/dWv of the decoder's cross-attention sublayer k (value from the encoder "
     "output)"},
    {"gradw_co", K, B,
     "Frobenius norm of dLoss/dWo of the decoder's cross-attention sublayer k (output matrix)"},
    {"gradw_wga", K, B, "Frobenius norm of dLoss/dW_g of sublayer k (attention output gate, attention_gate)"},
    {"jac_sq", S, B,
     "mean squared singular value of J = dx_K/dx_l (T d x T d): E||J^T u||^2 over unit u, estimated from "
     "jacobian_probes random u; 1 at l = K",
     true},
    {"jac_spread", S, B,
     "(m2 - m1^2)/m1^2, m_j the mean of sigma^(2j) over the singular values of dx_K/dx_l: 0 iff all are "
     "equal (isometry up to scale, Pennington et al. 2017); from the variance over jacobian_probes probes",
     true},
    {"block_identity_dev", K, B,
     "||J_k - I||_F/||I||_F, J_k = dx_{k+1}/dx_k of sublayer k alone (earlier values held fixed), from "
     "jacobian_probes random probes (Curse of Depth, arXiv 2502.05795)",
     true},
    {"output_change", S, F,
     "||x'_l - x_l||_F^2 / ||x_l||_F^2, x'_l the stream of a second forward pass with every weight matrix W "
     "replaced by W + dW (key update); x_l without a final norm. Only with update != none"},
}};
}  // namespace

std::span<const MetricInfo> metric_table() {
  return kTable;
}

std::string_view pass_name(MetricPass pass) {
  return pass == MetricPass::forward ? "forward" : "backward";
}

int metric_id(std::string_view name) {
  for (int i = 0; i < metric::count; ++i)
    if (kTable[i].name == name) return i;
  return -1;
}

}  // namespace normsim::sim
