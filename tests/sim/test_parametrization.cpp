// Parametrizations at step 0 (docs/design/parametrization.md 5, P2): the presets' stds, multipliers and
// branch multipliers against their sources' formulas (1a-1d), the rules' errors at the config's edge, the
// preset that restates the default init reproducing it bit for bit, and result headers of grids without a
// parametrization left byte for byte.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "same_records.hpp"
#include "sim/backend.hpp"
#include "sim/init.hpp"
#include "sim/parametrization.hpp"
#include "sim/placement.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/result_rows.hpp"
#include "sim/run/results.hpp"
#include "test_util.hpp"
#include "vocab/builtin_parametrizations.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
using normsim::test::same_records;
using normsim::vocab::Sublayer;

namespace {

Config preset(const std::string& name, Sublayer sub, int width, int depth) {
  Config c;
  c.parametrization = name, c.sublayer = sub, c.width = width, c.depth = depth, c.heads = 2;
  return c;
}

double std_of(const Config& c, int k, WeightKind w) {
  const StackShape s(c);
  return weight_std(s, *placement_for(c), k, w);
}

// The ConfigError `text` gets at the config's edge.
std::string refusal(const std::string& text) {
  try {
    parse_grid(text, "p.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// sp's rule is init = "fanin"'s arithmetic (gain / sqrt(fan_in), multiplier 1, no branch multiplier): the
// same draws, the same numbers, on every sublayer kind and in both precisions.
TEST_CASE("preset_sp_equals_default") {
  auto cpu = make_backend(normsim::vocab::BackendChoice::cpu, 2);
  const std::vector<int> samples{0, 1};
  for (const Sublayer sub : {Sublayer::mlp, Sublayer::transformer, Sublayer::decoder})
    for (const auto precision : {normsim::vocab::Precision::float32, normsim::vocab::Precision::float64}) {
      Config c;
      c.sublayer = sub, c.precision = precision, c.width = 16, c.tokens = 3, c.heads = 2, c.samples = 2;
      c.depth = sub == Sublayer::decoder ? 6 : 4, c.init_gain = 1.3;
      Config sp = c;
      sp.parametrization = "sp";
      INFO(normsim::vocab::name(sub));
      REQUIRE(validate(sp).empty());
      CHECK(same_records(cpu->run(c, samples), cpu->run(sp, samples)));
    }
}

// microsoft/mup (1a): a hidden matrix's var 1/fan_in is the base model's 1/base_fan_in scaled by
// width_mult^-1 (mup/init.py l.22-29); MuReadout's std is SP's x width_mult^1/2 (mup/shape.py l.189-194),
// its forward x 1/width_mult (mup/layer.py l.54-56); width_mult = width / base_width.
TEST_CASE("mup_std_matches_package") {
  for (const int width : {64, 256}) {
    Config c = preset("mup", Sublayer::transformer, width, 4);
    c.base_width = 64;
    const double width_mult = double(width) / 64, base_fan_in = 64;
    INFO("width " << width);
    for (const WeightKind w :
         {WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo, WeightKind::w1})
      CHECK(std_of(c, 0, w) == Approx(std::sqrt(1 / base_fan_in / width_mult)).epsilon(1e-14));
    // w2's fan_in is the hidden width 4 d, its base 4 x 64.
    CHECK(std_of(c, 1, WeightKind::w2) ==
          Approx(std::sqrt(1 / (4 * base_fan_in) / width_mult)).epsilon(1e-14));
    const StackShape s(c);
    const MatrixRule readout = s.rules->edge(s, "readout", width, 10);
    const double sp_std = 1 / std::sqrt(double(width));
    CHECK(*readout.std == Approx(sp_std * std::sqrt(width_mult)).epsilon(1e-14));
    CHECK(readout.mult == Approx(1 / width_mult).epsilon(1e-14));
    CHECK(s.rules->branch_mult(0) == 1.0);
    // Table 1a's learning rates: Adam / width_mult for hidden matrices, SGD x width_mult at the edges.
    CHECK(s.rules->at(0, WeightKind::wq).lr_adam == Approx(c.update_lr / width_mult));
    CHECK(s.rules->at(0, WeightKind::wq).lr_sgd == c.update_lr);
    CHECK(s.rules->edge(s, "embedding", 1, width).lr_sgd == Approx(c.update_lr * width_mult));
  }
}

// OLMo's mitchell init (olmo/model.py l.493-495, 716-717): in-projections 1/sqrt(d); attn_out
// 1/sqrt(2 d (layer_id+1)), ff_out 1/sqrt(2 d_ff (layer_id+1)); each x the std of N(0,1) truncated at +-3.
TEST_CASE("olmo_mitchell_std") {
  const double phi3 = std::exp(-4.5) / std::sqrt(2 * M_PI), mass = std::erf(3 / std::sqrt(2.0));
  const double truncated = std::sqrt(1 - 6 * phi3 / mass);
  CHECK(truncated == Approx(0.98658).margin(5e-6));
  const Config c = preset("olmo_mitchell", Sublayer::transformer, 32, 6);
  for (int layer = 0; layer < 3; ++layer) {
    const int attn = 2 * layer, mlp = 2 * layer + 1;
    CHECK(std_of(c, attn, WeightKind::wq) == Approx(0.98658 / std::sqrt(32.0)).epsilon(1e-14));
    CHECK(std_of(c, mlp, WeightKind::w1) == Approx(0.98658 / std::sqrt(32.0)).epsilon(1e-14));
    CHECK(std_of(c, attn, WeightKind::wo) ==
          Approx(0.98658 / std::sqrt(2.0 * 32 * (layer + 1))).epsilon(1e-14));
    CHECK(std_of(c, mlp, WeightKind::w2) ==
          Approx(0.98658 / std::sqrt(2.0 * 128 * (layer + 1))).epsilon(1e-14));
  }
}

// T-Fixup (transformer_layer.py l.31-44, multihead_attention.py l.89-97, transformer.py l.378-380, 908-910):
// Xavier with q, k at gain 1/sqrt 2; fc1, fc2, out_proj x 0.67 N^-1/4, v_proj x 0.67 N^-1/4 sqrt 2 (on its
// gain 1/sqrt 2); the embedding N(0, d^-1/2) x sqrt(d) (embed_scale) x (9N)^-1/4.
TEST_CASE("tfixup_std") {
  const int d = 32, blocks = 3;
  const Config c = preset("tfixup", Sublayer::transformer, d, 2 * blocks);
  const double xavier = std::sqrt(2.0 / (d + d)), xavier_mlp = std::sqrt(2.0 / (d + 4 * d));
  const double scale = 0.67 * std::pow(double(blocks), -0.25);
  CHECK(std_of(c, 0, WeightKind::wq) == Approx(xavier / std::sqrt(2.0)).epsilon(1e-14));
  CHECK(std_of(c, 0, WeightKind::wk) == Approx(xavier / std::sqrt(2.0)).epsilon(1e-14));
  CHECK(std_of(c, 0, WeightKind::wv) ==
        Approx(xavier / std::sqrt(2.0) * scale * std::sqrt(2.0)).epsilon(1e-14));
  CHECK(std_of(c, 2, WeightKind::wo) == Approx(xavier * scale).epsilon(1e-14));
  CHECK(std_of(c, 1, WeightKind::w1) == Approx(xavier_mlp * scale).epsilon(1e-14));
  CHECK(std_of(c, 5, WeightKind::w2) == Approx(xavier_mlp * scale).epsilon(1e-14));
  const StackShape s(c);
  const double embedding = std::pow(double(d), -0.5) * std::sqrt(double(d)) * std::pow(9.0 * blocks, -0.25);
  CHECK(*s.rules->edge(s, "embedding", 1, d).std == Approx(embedding).epsilon(1e-14));
}

// Megatron (legacy/model/utils.py l.21-23): output projections sigma / sqrt(2 num_layers); PR 4381's
// depth_mup: branch x depth_mult^-1, output-projection init x depth_mult^+0.5; the width factor
// 1/sqrt(m_N) as nanoGPT-mup's hidden init (l.172-174).
TEST_CASE("megatron_std") {
  Config c = preset("megatron_depth_mup", Sublayer::transformer, 512, 16);
  c.base_width = 256, c.base_depth = 4, c.init_std = 0.02;
  const double m_N = 2, m_L = 4, layers = 8;
  CHECK(std_of(c, 0, WeightKind::wq) == Approx(0.02 / std::sqrt(m_N)).epsilon(1e-14));
  CHECK(std_of(c, 1, WeightKind::w1) == Approx(0.02 / std::sqrt(m_N)).epsilon(1e-14));
  const double out = 0.02 / std::sqrt(2 * layers) / std::sqrt(m_N) * std::sqrt(m_L);
  CHECK(std_of(c, 0, WeightKind::wo) == Approx(out).epsilon(1e-14));
  CHECK(std_of(c, 15, WeightKind::w2) == Approx(out).epsilon(1e-14));
  const StackShape s(c);
  for (int k = 0; k < 16; ++k) CHECK(s.rules->branch_mult(k) == Approx(1 / m_L).epsilon(1e-15));
  CHECK(s.rules->at(3, WeightKind::w1).eps == Approx(c.adam_eps / m_L));
}

// nanoGPT-mup's Adam epsilon as fixed @3904404 (configure_optimizers' CompleteP block, the paper's Eq. 40):
// embedding and unembedding adam_eps / m_N, hidden matrices adam_eps / m_N * m_L^-alpha (before, every group
// had the hidden one).
TEST_CASE("depth presets scale the hidden Adam epsilon with depth, the edges' with width only") {
  for (const auto& [name, alpha] : {std::pair{"depth_mup", 0.5}, std::pair{"completep", 1.0}}) {
    Config c = preset(name, Sublayer::mlp, 512, 16);
    c.base_width = 128, c.base_depth = 4;
    const double m_N = 4, m_L = 4;
    const StackShape s(c);
    CHECK(s.rules->at(3, WeightKind::w1).eps == Approx(c.adam_eps / m_N * std::pow(m_L, -alpha)));
    CHECK(s.rules->edge(s, "embedding", 8, 512).eps == Approx(c.adam_eps / m_N));
    CHECK(s.rules->edge(s, "readout", 512, 8).eps == Approx(c.adam_eps / m_N));
  }
}

// A rule's multiplier is folded into the drawn matrix; later rules override earlier ones; zero_out draws
// output projections of std 0.
TEST_CASE("rules override in order, and the multiplier folds into the std") {
  Config c = preset("custom", Sublayer::mlp, 16, 4);
  c.param_rules = "all: std = 0.5; w2: std = 0.25, mult = 2^-1; hidden: mult = 3; branch: mult = k + 1";
  CHECK(std_of(c, 0, WeightKind::w1) == 1.5);
  CHECK(std_of(c, 0, WeightKind::w2) == 0.75);
  CHECK(StackShape(c).rules->branch_mult(2) == 3.0);
  CHECK(std_of(preset("zero_out", Sublayer::transformer, 16, 2), 0, WeightKind::wo) == 0.0);
}

TEST_CASE("param_rules_errors") {
  const std::string head = "width = 16\ndepth = 4\nparametrization = \"custom\"\n";
  CHECK_THAT(refusal(head + "param_rules = \"hidden: std = 1 / sqrtt(fan_in)\"\n"),
             Catch::Contains("p.toml:4: key 'param_rules': column 19: unknown function 'sqrtt'"));
  CHECK_THAT(refusal(head + "param_rules = \"w1 hiden: std = 1\"\n"),
             Catch::Contains("column 4: unknown selector 'hiden'"));
  CHECK_THAT(refusal(head + "param_rules = \"w1: sdt = 1\"\n"),
             Catch::Contains("column 5: unknown field 'sdt'"));
  CHECK_THAT(refusal(head + "param_rules = \"branch: std = 1\"\n"),
             Catch::Contains("column 9: the branch selector has one field, mult"));
  CHECK_THAT(refusal(head + "param_rules = \"w1: std = 1 / widht\"\n"),
             Catch::Contains("column 15: unknown name 'widht'"));
  CHECK_THAT(refusal(head + "param_rules = \"w1: std = 2 $ 1\"\n"),
             Catch::Contains("column 13: unexpected '$'"));
  CHECK_THAT(refusal(head + "param_rules = \"w1 std = 1\"\n"),
             Catch::Contains("column 1: expected 'selector:"));
  CHECK_THAT(
      refusal(head + "param_rules = \"readout: std = 1\"\n"),
      Catch::Contains("column 1: a rule for the readout matrix, which this configuration does not have"));
  CHECK_THAT(refusal(head + "param_rules = \"out_proj: std = 0.1 - k * 0.05\"\n"),
             Catch::Contains("key 'param_rules': std of w2 at sublayer 3 is -0.05"));
  CHECK_THAT(refusal("parametrization = \"mup\"\nupdate = \"adam\"\n"),
             Catch::Contains("key 'update': a parametrization's per-matrix learning rates"));
  CHECK_THAT(refusal("param_rules = \"w1: std = 1\"\n"),
             Catch::Contains("key 'param_rules': rules need parametrization = \"custom\""));
  CHECK_THAT(refusal("parametrization = \"mupp\"\n"), Catch::Contains("did you mean 'mup'?"));
  CHECK_THAT(refusal("branch_scale = \"fan_in\"\n"), Catch::Contains("column 1: fan_in is a matrix's"));
  CHECK(refusal("parametrization = \"completep\"\nbranch_scale = \"m_L^0.5\"\n").empty());
}

// docs/design/parametrization.md 4.1: the new keys are columns only where a configuration sets them, so
// the golden grid (and every grid without a parametrization) writes the headers it wrote before them.
TEST_CASE("golden_headers_unchanged") {
  const Grid golden = load_grid(std::string(NORMSIM_SOURCE_DIR) + "/tests/data/placements_golden.toml");
  const std::string keys =
      "config,placement,sublayer,norm,norm_alpha,norm_shift,final_norm_alpha,final_norm_shift,norm_eps,"
      "norm_gain,width,tokens,depth,mlp_ratio,activation,moe_experts,moe_top_k,moe_gate,heads,causal,qk_norm,"
      "logit_scaling,attention_temperature,attention_gate,final_norm,input_norm,block,branch_scale,"
      "mix_fraction,deepnorm_alpha,deepnorm_beta,rezero_alpha,spannorm_lambda,init,init_gain,init_std,"
      "scaled_output,placement_init,init_w1,init_w2,init_wgate,init_wq,init_wk,init_wv,init_wo,init_wga,"
      "init_wrouter,input_std,input_corr,encoder_cos,loss,jacobian_probes,update,update_lr,update_scale,seed,"
      "samples,precision,recompute,";
  CHECK(csv_header(ResultTable::layers, golden.configs) == keys + "sample,metric,l,k,value\n");
  CHECK(csv_header(ResultTable::summary, golden.configs) == keys + "metric,l,k,mean,se,n\n");
  CHECK(csv_header(ResultTable::theory, golden.configs) == keys + "metric,l,k,value\n");
  CHECK(grid_json(golden).dump().find("base_width") == std::string::npos);
  const Grid set = parse_grid("parametrization = [\"none\", \"mup\"]\nbase_width = 64\n", "p.toml");
  const std::string header = csv_header(ResultTable::layers, set.configs);
  // Only the keys some configuration sets: param_rules, base_depth and adam_eps stay out.
  CHECK(header.find(",init_wrouter,parametrization,base_width,input_std,") != std::string::npos);
  CHECK(header.find("adam_eps") == std::string::npos);
  CHECK(csv_key_fields(set, 1, key_columns(set_in(set.configs))).find(",mup,64,") != std::string::npos);
}

// Every preset's rules parse, name only known keys and resolve to finite stds >= 0 on every sublayer kind
// (`normsim list parametrizations` prints no rule that a config would refuse).
TEST_CASE("every preset is a valid configuration on every sublayer kind") {
  for (const auto& p : normsim::vocab::builtin_parametrizations())
    for (const Sublayer sub :
         {Sublayer::mlp, Sublayer::attention, Sublayer::transformer, Sublayer::decoder}) {
      Config c = preset(std::string(p.name), sub, 32, sub == Sublayer::decoder ? 6 : 4);
      INFO(p.name << " " << normsim::vocab::name(sub));
      CHECK(validate(c).empty());  // resolving the rules evaluates every name they read
    }
}
