// Every built-in placement that is an expression of the block language: its expression (its row in
// vocab/builtin_blocks.cpp, with its name, label and family, which the mean field reads too), its source, and
// its init rule where the paper gives one. The order of `normsim list placements` is the vocab table's
// (registry.cpp). Adding a placement: its row there and one row here.
#include <array>
#include <cmath>

#include "sim/placements/all.hpp"
#include "sim/placements/expression.hpp"
#include "vocab/builtin_blocks.hpp"

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

// DeepNet §4.3: the FFN, value and output projections x beta, not the query and key (nor the
// cross-attention's). As the official code writes it (microsoft/torchscale at 4d1e0e8,
// torchscale/architecture/encoder.py:235-252 and decoder.py: 286-298): parameters whose name contains "fc1",
// "fc2", "out_proj" or "v_proj" are divided by (8N)^(1/4). Its gated FFN
// (torchscale/component/gate_linear_unit.py:25-41: fc2(act(fc1 x) * gate x)), which RetNet builds
// (retnet.py:134-135) and initializes with the same DeepNorm rule (retnet.py:257-266), thus has its activated
// projection fc1 scaled and its linear `gate` not. normsim's SwiGLU is (silu(u Wgate) * (u W1)) W2: Wgate is
// torchscale's fc1 (x beta), W1 its `gate` (x 1).
double deepnorm_init(const StackShape& s, WeightKind w) {
  switch (w) {
    case WeightKind::wq:
    case WeightKind::wk:
    case WeightKind::cq:
    case WeightKind::ck:
    case WeightKind::wga:      // the attention gate: columns of q_proj in its official code, so as W_Q
    case WeightKind::wrouter:  // a routed MLP's router is none of fc1, fc2, v_proj, out_proj
      return 1.0;
    case WeightKind::w1:
      return s.swiglu ? 1.0 : deepnorm_beta(s);
    default:
      return deepnorm_beta(s);
  }
}

// B2T's official init (takase/b2t_connection at c8e2ad4, fairseq/modules/transformer_layer.py:401-405,
// `rescaling_init(model, layer_num)`, called by TransformerEncoderLayer.__init__ at lines 55-57 and
// TransformerDecoderLayer.__init__ at 215-217 when residual_bottom_to_top): every parameter whose name
// contains "weight" and not "layer_norm" (the q, k, v, out projections, fc1, fc2) x layer_num^(-1/2),
// layer_num the number of layers. B2T's unit is a layer of two sublayers, so layer_num = K/2; on a decoder
// its unit is the decoder layer of three (vocab::unit_size), so layer_num = K/3.
double b2t_init(const StackShape& s, WeightKind) {
  return 1.0 / std::sqrt(s.depth / (s.cfg.sublayer == vocab::Sublayer::decoder ? 3.0 : 2.0));
}

// HybridNorm* as the official code builds it (BryceZhuo/HybridNorm at f0dd605, README.md:50-52: HybridNorm
// trained with --model.norm_pos_special_config="_{0:{'attn_norm':True,'ffn_residual':False}}_"). In
// dense_model/olmo/model.py that dict overrides block 0's entry of layer_norm_pos_configs (lines 474-486);
// attn_norm = True gives the attention the Pre-Norm input h = attn_norm(x) with the bare residual x
// (lines 815-830, attn_residual stays False), ffn_residual = False keeps og_x = x before ff_norm, a Pre-Norm
// FFN x + FFN(N(x)) (lines 868-880). The q/k/v norms are built from the model config for every layer
// (lines 449-466) and applied in attention() (lines 668-673): block 0 keeps its QKV-norm, hence Fqkv(N(x)).
using P = vocab::Placement;
ExpressionPlacement builtin(P id, std::string_view source, InitMultiplier init = nullptr) {
  return ExpressionPlacement{id, vocab::builtin_block(id), source, init};
}

const auto& builtins() {
  static const std::array list{
      builtin(P::post, "Post-LN, Vaswani et al. 2017, arXiv 1706.03762 §3.1"),
      builtin(P::pre, "Pre-LN, Xiong et al. 2020, arXiv 2002.04745; final N"),
      builtin(P::peri, "Peri-LN / Sandwich-LN, Kim et al. 2025; Ding et al. 2021; final N"),
      builtin(P::mix, "Mix-LN, Li et al. 2024, arXiv 2412.13795"),
      builtin(P::b2t, "B2T connection, Takase et al. 2022, arXiv 2206.00330; every weight x (K/2)^(-1/2)",
              b2t_init),
      builtin(P::deepnorm,
              "DeepNorm, Wang et al. 2022; FFN/value/output weights x deepnorm_beta (torchscale)",
              deepnorm_init),
      builtin(P::spannorm, "SpanNorm, Wang et al. 2026; equations unconfirmed"),
      builtin(P::hybridnorm, "HybridNorm, Zhuo et al. 2025, arXiv 2503.04598; final N"),
      builtin(P::hybridnorm_star,
              "HybridNorm*, Zhuo et al. 2025, arXiv 2503.04598: Pre-Norm block 0; final N"),
      builtin(P::lnscale, "LayerNorm Scaling, Sun et al. 2025, arXiv 2502.05795 Eq. 12; final N"),
      builtin(P::rezero, "ReZero, Bachlechner et al. 2020; no norm"),
      builtin(P::none, "no norm in the stack"),
      builtin(P::olmo2,
              "OLMo 2, OLMo et al. 2024, arXiv 2501.00656; its QK-norm with qk_norm = true; final N"),
  };
  return list;
}

}  // namespace

const Placement* expression_placement(vocab::Placement id) {
  for (const ExpressionPlacement& p : builtins())
    if (p.id() == id) return &p;
  return nullptr;
}

}  // namespace normsim::sim
