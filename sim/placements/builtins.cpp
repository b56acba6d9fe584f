// Every built-in placement that is an expression of the block language (vocab/block_expr.hpp, see
// docs/placements.md): one row each, its expression, its source, and its init rule where the paper gives
// one. The order is the one `normsim list placements` shows. Adding a placement: one row here and its name
// in vocab/names.cpp.
#include <array>
#include <cmath>

#include "sim/placements/all.hpp"
#include "sim/placements/expression.hpp"

namespace normsim::sim {

// DeepNorm in sublayers (K = 2N for N encoder layers, DeepNet §4.1, §4.3): alpha = (2N)^(1/4) = K^(1/4),
// beta = (8N)^(-1/4) = (4K)^(-1/4), unless deepnorm_alpha/beta are given.
double deepnorm_alpha(const StackShape& s) {
  return s.cfg.deepnorm_alpha > 0 ? s.cfg.deepnorm_alpha : std::pow(double(s.depth), 0.25);
}
double deepnorm_beta(const StackShape& s) {
  return s.cfg.deepnorm_beta > 0 ? s.cfg.deepnorm_beta : std::pow(4.0 * s.depth, -0.25);
}

namespace {

// DeepNet §4.3: w1, wgate, w2, wv, wo initialized x beta (not wq, wk).
double deepnorm_init(const StackShape& s, WeightKind w) {
  return (w == WeightKind::wq || w == WeightKind::wk) ? 1.0 : deepnorm_beta(s);
}

using P = vocab::Placement;
const std::array<ExpressionPlacement, 11>& builtins() {
  static const std::array<ExpressionPlacement, 11> list{
      ExpressionPlacement{P::post, "N(x + F(x))", "Post-LN, Vaswani et al. 2017, arXiv 1706.03762 §3.1"},
      ExpressionPlacement{P::pre, "x + F(N(x))", "Pre-LN, Xiong et al. 2020, arXiv 2002.04745; final N"},
      ExpressionPlacement{P::peri, "x + N(F(N(x)))",
                          "Peri-LN / Sandwich-LN, Kim et al. 2025; Ding et al. 2021; final N"},
      // Blocks b < floor(mix_fraction L) are Post-LN (1e-9 keeps 0.3 * 10 from flooring to 2).
      ExpressionPlacement{P::mix, "b < floor(mix_fraction * L + 1e-9) ? N(x + F(x)) : x + F(N(x))",
                          "Mix-LN, Li et al. 2024, arXiv 2412.13795"},
      // Sublayer pairs (2j, 2j+1); x0 = x_{2j}, the bottom-to-top residual.
      ExpressionPlacement{P::b2t, "N(x + F(x)); N(x + F(x) + x0)",
                          "B2T connection, Takase et al. 2022, arXiv 2206.00330"},
      ExpressionPlacement{P::deepnorm, "N(deepnorm_alpha * x + F(x))",
                          "DeepNorm, Wang et al. 2022; FFN/value/output weights x deepnorm_beta",
                          deepnorm_init},
      // normsim's reading of the abstract (arXiv 2601.22580): one residual across the pair, one norm after.
      ExpressionPlacement{P::spannorm, "x + spannorm_lambda * F(N(x)); N(x + spannorm_lambda * F(N(x)))",
                          "SpanNorm, Wang et al. 2026; equations unconfirmed"},
      // Attention with per-head RMSNorm of Q, K, V and a bare residual; Post-Norm FFN on the normalized x.
      ExpressionPlacement{P::hybridnorm, "attention ? x + Fqkv(x) : N(x) + F(N(x))",
                          "HybridNorm, Zhuo et al. 2025, arXiv 2503.04598; final N"},
      ExpressionPlacement{P::lnscale, "x + F(N(x) / sqrt(b + 1))",
                          "LayerNorm Scaling, Sun et al. 2025, arXiv 2502.05795 Eq. 12; final N"},
      ExpressionPlacement{P::rezero, "x + rezero_alpha * F(x)", "ReZero, Bachlechner et al. 2020; no norm"},
      ExpressionPlacement{P::none, "x + F(x)", "no norm in the stack"},
  };
  return list;
}

}  // namespace

std::span<const Placement* const> expression_placements() {
  static const std::array<const Placement*, 11> list = [] {
    std::array<const Placement*, 11> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = &builtins()[i];
    return out;
  }();
  return list;
}

}  // namespace normsim::sim
