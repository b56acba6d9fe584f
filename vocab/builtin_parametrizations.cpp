// The table of built-in parametrizations (vocab/builtin_parametrizations.hpp). The rules restate, as
// expressions of width and depth, what each source's code computes (docs/design/parametrization.md 1a-1d);
// m_N = width/base_width, m_L = depth/base_depth, L = blocks. A preset may extend another: its rules follow
// the other's and override them where they name the same matrix and field.
#include "vocab/builtin_parametrizations.hpp"

#include <array>

namespace normsim::vocab {

namespace {

constexpr std::array kPresets{
    BuiltinParametrization{"sp", "", "all: std = init_gain / sqrt(fan_in)",
                           "Tensor Programs V's standard parametrization: PyTorch's default variance class "
                           "(var 1/fan_in); normsim's init = \"fanin\"",
                           ""},
    BuiltinParametrization{
        "nanogpt_sp", "", "all: std = init_std; out_proj: std = init_std / sqrt(2 * L)",
        "EleutherAI/nanoGPT-mup (completep @6f8bc3b) model.py l.176-177 (c_proj init_std/sqrt(2 n_layer)), "
        "l.195-201 (every other Linear and the embeddings N(0, init_std))",
        "init_std = 0.02"},
    // microsoft/mup as its code computes it (table 1a): hidden matrices var 1/fan_in and Adam LR /
    // width_mult, the embedding's SGD LR x width_mult, MuReadout's std 1/sqrt(base fan_in) and forward
    // 1/width_mult.
    BuiltinParametrization{"mup", "",
                           "embedding: lr_sgd = update_lr * m_N; hidden: std = 1 / sqrt(fan_in), lr_adam = "
                           "update_lr / m_N; readout: std = 1 / sqrt(base_width), mult = 1 / m_N, lr_sgd = "
                           "update_lr * m_N",
                           "microsoft/mup @1981497 mup/init.py l.22-29, mup/optim.py l.69-77 and 123-137, "
                           "mup/layer.py l.49-56 (maintainer: Table 8 of Tensor Programs V, issue 7)",
                           "logit_scaling = \"mup\" (README l.71-76)"},
    BuiltinParametrization{
        "depth_mup", "mup",
        "branch: mult = m_L^-0.5; hidden: lr_adam = update_lr / m_N * m_L^-0.5; "
        "all: eps = adam_eps / m_N; hidden: eps = adam_eps / m_N * m_L^-0.5",
        "nanoGPT-mup (completep @6f8bc3b) model.py l.113, 117-118 (branch x 1/m_L^alpha), l.331-332 (Adam LR "
        "m_N^-1 m_L^(alpha-1)) at alpha = 1/2 (depth_alpha_05/run.sh l.7); eps as fixed @3904404 "
        "(configure_optimizers' CompleteP block, after arXiv 2512.22382; the paper's Eq. 40): embedding and "
        "unembedding m_N^-1, hidden m_N^-1 m_L^-alpha (@6f8bc3b l.335 scaled every group's by both); "
        "Tensor Programs VI",
        "logit_scaling = \"mup\"; base_depth = 4 (2 blocks, run.sh l.9)"},
    BuiltinParametrization{
        "completep", "mup",
        "branch: mult = 1 / m_L; hidden: lr_adam = update_lr / m_N; "
        "all: eps = adam_eps / m_N; hidden: eps = adam_eps / (m_N * m_L)",
        "nanoGPT-mup (completep @6f8bc3b) model.py l.113, 117-118, 331-332 at alpha = 1, eps as fixed "
        "@3904404 (see depth_mup); hidden init init_std/sqrt(m_N) there (l.168-174) is 1/sqrt(fan_in) here",
        "logit_scaling = \"mup\"; base_depth = 4; its tied embedding, weight decay and norm-gain LR have "
        "no counterpart (normsim trains matrices only)"},
    BuiltinParametrization{
        "megatron_depth_mup", "mup",
        "hidden: std = init_std / sqrt(m_N); "
        "out_proj: std = init_std / sqrt(2 * L * m_N) * m_L^0.5; branch: mult = 1 / m_L; "
        "hidden: eps = adam_eps / m_L",
        "NVIDIA/Megatron-LM @9538bb8 megatron/legacy/model/utils.py l.21-23 (sigma/sqrt(2 num_layers)); "
        "PR 4381's depth_mup recipe (branch depth_mult^-1, eps depth_mult^-1, output-projection init "
        "depth_mult^+0.5); width factor as nanoGPT-mup l.172-174",
        "init_std = 0.02"},
    BuiltinParametrization{
        "tfixup", "",
        "all: std = sqrt(2 / (fan_in + fan_out)); wq wk: std = 1 / sqrt(fan_in + fan_out); "
        "w1 w2 wv wo: std = 0.67 * L^-0.25 * sqrt(2 / (fan_in + fan_out)); embedding: std = (9 * L)^-0.25",
        "layer6ai-labs/T-Fixup @b17e166 fairseq/modules/transformer_layer.py l.31-44, "
        "multihead_attention.py l.89-91 and 97, fairseq/models/transformer.py l.378-380 and 908-910",
        "placement = \"none\" (Train_IWSLT_TFixup_example.sh: --dont-use-layernorm)"},
    BuiltinParametrization{
        "olmo_mitchell", "",
        "in_proj embedding readout: std = 0.98658 / sqrt(width); "
        "out_proj: std = 0.98658 / sqrt(2 * fan_in * (b + 1))",
        "allenai/OLMo @59a53e3 olmo/model.py l.493-495 (attn_out, ff_out 1/sqrt(2 fan_in (layer_id+1))), "
        "l.716-717, 1183-1184, 1221-1222 (1/sqrt(d)); truncated at 3 std there, so x 0.98658, the std of "
        "N(0,1) truncated at +-3",
        ""},
    BuiltinParametrization{
        "zero_out", "", "out_proj: std = 0",
        "karpathy/nanochat @92d63d4 nanochat/gpt.py l.230-232; KellerJordan/modded-nanogpt "
        "@f411b3d train_gpt.py l.1308",
        ""},
};

}  // namespace

std::span<const BuiltinParametrization> builtin_parametrizations() {
  return kPresets;
}

const BuiltinParametrization* find_parametrization(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_rules(const BuiltinParametrization& p) {
  if (p.extends.empty()) return std::string(p.rules);
  return preset_rules(*find_parametrization(p.extends)) + "; " + std::string(p.rules);
}

}  // namespace normsim::vocab
