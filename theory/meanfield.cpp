// The mean-field driver: builds the branches, runs the placement's expression (or Admin's step) forward,
// seeds the gradient at the output (readout loss, final norm) and runs the recorded linear maps backward.
#include "theory/meanfield.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <utility>

#include "theory/cross_attention.hpp"
#include "theory/jacobian.hpp"
#include "theory/placements/context.hpp"
#include "theory/pointwise_norm.hpp"
#include "vocab/metrics.hpp"
#include "vocab/names.hpp"

namespace normsim::theory {
namespace {
// An mse loss on the logits of a readout matrix (StackSpec::readout_sq): its backward is not predicted.
bool mse_through_readout(const StackSpec& s) {
  return s.loss == Loss::mse && s.readout_sq.has_value();
}

using detail::StackContext;
using StepFn = int (*)(StackContext&, int);

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// max(0, v) that keeps a NaN (std::max(0.0, NaN) is 0: an overflow would read as a prediction of 0).
double nonnegative(double v) {
  return v < 0.0 ? 0.0 : v;
}

// A forward series' index (NORMSIM_MEANFIELD_FORWARD): layer l = 0..K or sublayer k = 0..K-1.
enum class SeriesIndex { layer, sublayer };

bool has_attention(const StackSpec& s) {
  return s.sublayer != SublayerKind::mlp;
}
bool has_mlp(const StackSpec& s) {
  return s.sublayer != SublayerKind::attention;
}

std::vector<std::string> caveats_for(const StackSpec& s, bool grads_predicted) {
  std::vector<std::string> c = {
      "infinite width (large d, Gaussian weights, gradient independence); finite-d factor (1 - c/d) only at "
      "the final norm (theory.md §0, §2.2 P5)",
      "tokens exchangeable: one second moment and one cross moment per layer"};
  if (s.moe_experts > 0 && s.sublayer != SublayerKind::attention)
    c.push_back(
        "routed MLP: gate moments and the gates' Jacobian moments by a fixed Monte Carlo rule "
        "(theory/routing.hpp, standard error ~1e-3 of the value); each token's gates are O(1) random at any "
        "width, and the tokens' Grams are averaged over them (docs/theory_notes.md \"Routed MLP backward\")");
  if (has_attention(s)) {
    c.push_back(
        "attention = uniform-attention value path (W_Q, W_K -> 0, theory.md §1.2): an approximation; real "
        "softmax attention at Xavier init has logits of variance ~1 (logit_scaling and attention_temperature "
        "do not enter it: it is their infinite-temperature limit)");
    if (s.qk_norm)
      c.push_back(
          "qk_norm (per head or over the whole projection) acts on the logits only, which the "
          "uniform-attention value path ignores: every prediction is the one without it (its logits have "
          "second moment ~gamma^4, tests/sim/test_qk_norm.cpp)");
    if (s.attention_gate != vocab::AttentionGate::none)
      c.push_back(
          "attention_gate: the gate sigmoid(u W_g) is independent of the value path at init; its moments by "
          "quadrature at z ~ N(0, sigma_g^2 m), elementwise and headwise alike (exact in expectation; "
          "headwise "
          "averages over heads gates only, so its samples spread more)");
    if (s.causal) c.push_back("causal mask enters through position averages of the uniform causal matrix");
    if (s.sublayer == SublayerKind::decoder)
      c.push_back(
          "decoder cross-attention: the uniform average of the encoder tokens' value projections, "
          "independent "
          "of the stream (theory/cross_attention.hpp); HybridNorm's QKV norm on it is not modelled");
  }
  if (has_mlp(s)) {
    c.push_back(
        "gradw_*: E||sum_t a_t^T g_t||_F^2 with forward activations independent of gradients; token cross "
        "terms from the Grams (zero for MLP stacks with a readout loss, so squared norms add over tokens)");
  }
  if (s.random_update_scale > 0) {
    c.push_back(
        "output_change: first order in update_scale s (relative error O(s^2)); a LayerNorm's O(1/d) terms "
        "(its Jacobian drops 2/d of a perturbation, E[1/sigma^2] exceeds 1/E[sigma^2] by 2/d) cancel, an "
        "RMSNorm leaves +1/d per norm, not included");
    if (has_attention(s))
      c.push_back(
          "output_change with attention: only the value and output matrices move the uniform-attention "
          "branch; "
          "moves of W_Q, W_K (which change the softmax) are left out, exact only when W_Q = 0");
  }
  if (mse_through_readout(s))
    c.push_back(
        "mse loss through a readout matrix: the gradient at y, y W_out W_out^T - t W_out^T, correlates "
        "with y; not predicted");
  else if (!grads_predicted)
    c.push_back("mse loss with no norm at the output: gradients correlate with y, not predicted");
  if (vocab::is_pointwise(s.norm))
    c.push_back(
        std::string(vocab::name(s.norm)) +
        ": Gaussian expectations of tanh/erf (docs/theory_notes.md \"Pointwise norms\"), exact at infinite "
        "width since every norm's input is x_0 plus branch outputs (a norm reading an earlier norm's output, "
        "as in Post-LN, is refused); no 1/d term at the final norm");
  if (s.placement != Placement::admin) {
    const vocab::Block b = block_of_spec(s);
    if (b.lanes() > 1)
      c.push_back(
          "lanes: their joint Gram carried between units (docs/design/multistream.md 3.4); the layer metrics "
          "are of the lanes' mean (grad_sq: the lanes' summed gradient), as the simulator's; jac_sq is not "
          "defined on lanes");
    else if (vocab::reads_embedding(b))
      c.push_back(
          "emb: the joint Gram of the stream and x_0 carried between units (docs/design/multistream.md 3.4); "
          "grad_sq and jac_sq at l = 0 include emb's gradient (x_0 is one value)");
  }
  if (s.tokens < 2) c.push_back("one token: token_cos not defined");
  return c;
}

// Every series of a profile under its metric id (vocab/metrics.hpp), for metric() and name_of().
std::span<const std::pair<int, const Series MeanFieldProfile::*>> series_table() {
  namespace m = vocab::metric;
  static const std::pair<int, const Series MeanFieldProfile::*> table[] = {
      {m::grad_sq, &MeanFieldProfile::grad_sq},
      {m::gradw_w1, &MeanFieldProfile::gradw_w1},
      {m::gradw_w2, &MeanFieldProfile::gradw_w2},
      {m::gradw_wgate, &MeanFieldProfile::gradw_wgate},
      {m::gradw_wrouter, &MeanFieldProfile::gradw_wrouter},
      {m::jac_sq, &MeanFieldProfile::jac_sq},
      {m::output_change, &MeanFieldProfile::output_change},
#define NORMSIM_MEANFIELD_ROW(metric, index, prediction) {m::metric, &MeanFieldProfile::metric},
      NORMSIM_MEANFIELD_FORWARD(NORMSIM_MEANFIELD_ROW)
#undef NORMSIM_MEANFIELD_ROW
  };
  return table;
}

}  // namespace

const Series* MeanFieldProfile::metric(std::string_view name) const {
  const int id = vocab::metric_id(name);
  for (const auto& [m, s] : series_table())
    if (m == id) return &(this->*s);
  return nullptr;
}

std::string_view MeanFieldProfile::name_of(const Series* series) const {
  for (const auto& [m, s] : series_table())
    if (&(this->*s) == series) return vocab::metric_table()[std::size_t(m)].name;
  return "";
}

namespace {
// The branches of gains w: a sublayer's MLP (routed or dense), attention, attention with per-head norms of
// Q, K, V, and the decoder's cross-attention.
detail::BranchSet branches_of(const StackSpec& spec, const WeightGains& w, double gamma_sq) {
  const AttentionMixing mix = AttentionMixing::uniform(spec.tokens, spec.causal);
  const std::optional<double> gate =
      spec.attention_gate == vocab::AttentionGate::none ? std::nullopt : std::optional<double>(w.wga);
  Branch mlp = Branch::mlp(spec.activation, w.w1, w.w2, w.wgate).biased(spec.bias_sq);
  const double attention_bias_sq =
      has_attention(spec) ? spec.bias_sq : 0.0;  // validate() refused what it must
  if (spec.moe_experts > 0 && spec.sublayer != SublayerKind::attention)
    mlp = mlp.routed({spec.moe_experts, spec.moe_top_k, spec.moe_renormalized, spec.router_sigma_sq,
                      spec.moe_router_path});
  return {
      mlp, Branch::attention(w.wv * w.wo, mix).gated(gate).biased(attention_bias_sq, w.wo),
      Branch::attention_value_norm(w.wo, gamma_sq, mix, w.wv, spec.eps).gated(gate),
      Branch::cross_attention(cross_attention_branch_sq(w.wv * w.wo, gamma_sq, spec.encoder_cos, spec.tokens))
          .biased(attention_bias_sq, w.wo)};
}

// The backward recursion of a block with Fv (docs/theory_notes.md "Value residual"): as the plain one, and
// each mixing sublayer's edge adds its share of dLoss/du_1 to `side` once its gradient is known; the source's
// unit, below every mixing sublayer, adds side to the gradients it reaches (fresh components: Grams add).
void backward_with_value_residual(StackContext& ctx) {
  const detail::ValueResidualField& v = ctx.value_residual;
  TokenGram side{};
  for (int k = ctx.spec.depth - 1; k >= 0; --k) {
    const auto& r = ctx.rec(k);
    if (const int a = v.edge_anchor[std::size_t(k)]; a >= 0) side = side + v.edge[std::size_t(k)](ctx.g(a));
    ctx.g(k) = r.back(ctx.g(r.anchor)) + v.source_coeff_sq[std::size_t(k)] * side;
  }
}
}  // namespace

MeanFieldProfile meanfield(const StackSpec& spec) {
  validate(spec);
  const int depth = spec.depth;
  const double gamma_sq = spec.gamma * spec.gamma;
  const bool pointwise = vocab::is_pointwise(spec.norm);  // DyT, Derf
  const detail::BranchSet all = branches_of(spec, spec.sigma_sq, gamma_sq);
  StackContext ctx{spec,
                   gamma_sq,
                   spec.eps,
                   all.mlp,
                   all.attention,
                   detail::LayerStorage(depth + 1),
                   1.0,
                   all.attention_qkv,
                   spec.placement == Placement::admin ? vocab::Block{} : block_of_spec(spec),
                   vocab::parse_scalar(spec.branch_scale),
                   all.cross,
                   spec.random_update_scale * spec.random_update_scale,
                   // x_0 does not depend on the weights: its change is zero
                   std::vector<TokenGram>(spec.random_update_scale > 0 ? std::size_t(depth) + 1 : 0),
                   pointwise ? vocab::parse_scalar(spec.norm_alpha) : vocab::Expr{},
                   pointwise ? vocab::parse_scalar(spec.norm_shift) : vocab::Expr{},
                   std::vector<double>(pointwise ? std::size_t(depth) + 1 : 0, 0.0),
                   std::vector<unsigned char>(pointwise ? std::size_t(depth) + 1 : 0, 0),
                   {},
                   {},
                   {}};
  if (vocab::reads_first_values(ctx.block)) {
    ctx.value_residual.edge_anchor.assign(std::size_t(depth), -1);
    ctx.value_residual.edge.assign(std::size_t(depth), GramMap::scale(0.0));
    ctx.value_residual.source_coeff_sq.assign(std::size_t(depth), 0.0);
  }
  for (const WeightGains& w : spec.sigma_sq_per_layer)
    ctx.per_layer.push_back(branches_of(spec, w, gamma_sq));
  const bool admin = spec.placement == Placement::admin;

  const bool final_norm = has_final_norm(spec);
  const bool grads_predicted =
      !mse_through_readout(spec) && (spec.loss == Loss::readout || final_norm || ends_in_norm(spec));
  MeanFieldProfile p;
  // Appends v, or nothing predicted where it came out NaN or Inf (an overflow), noted in p.nonfinite.
  std::vector<std::pair<const Series*, int>> dropped;
  const auto keep = [&](Series& s, double v) {
    if (!std::isfinite(v)) dropped.emplace_back(&s, int(s.size()));
    s.push_back(finite(v));
  };
  p.final_norm = final_norm;
  p.caveats = caveats_for(spec, grads_predicted);
  // Every series is appended in order into storage reserved once: each entry is written exactly once.
  p.grad_sq.reserve(depth + 1);
  for (auto* s : {&p.gradw_w1, &p.gradw_w2, &p.gradw_wgate, &p.gradw_wrouter}) s->reserve(depth);
#define NORMSIM_MEANFIELD_RESERVE(metric, index, prediction) \
  p.metric.reserve(SeriesIndex::index == SeriesIndex::layer ? depth + 1 : depth);
  NORMSIM_MEANFIELD_FORWARD(NORMSIM_MEANFIELD_RESERVE)
#undef NORMSIM_MEANFIELD_RESERVE

  // The forward metrics of layer l and sublayer l (which read x_l, x_{l+1} and record l). The forward loop
  // emits them for everything below the layer it is about to map, which is final by then: work that the
  // processor overlaps with the latency-bound recursion.
  const bool tokens = spec.tokens > 1;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  // The forward series at l (the sublayer ones only below the top, l < K).
  const auto emit_at = [&](int l, bool sublayer) {
    const TokenGram xl = ctx.x(l);
    const ForwardMoments m{xl.diag, tokens ? std::optional<double>(xl.cos()) : std::nullopt,
                           sublayer ? ctx.x(l + 1).diag : kNaN, sublayer ? ctx.rec(l).cross : kNaN,
                           sublayer ? ctx.rec(l).branch_sq : kNaN};
#define NORMSIM_MEANFIELD_EMIT(metric, index, prediction)              \
  if (sublayer || SeriesIndex::index == SeriesIndex::layer) {          \
    const std::optional<double> value = prediction;                    \
    value ? keep(p.metric, *value) : p.metric.push_back(std::nullopt); \
  }
    NORMSIM_MEANFIELD_FORWARD(NORMSIM_MEANFIELD_EMIT)
#undef NORMSIM_MEANFIELD_EMIT
  };
  int emitted = 0;
  auto emit_forward = [&](int upto) {
    for (; emitted < upto; ++emitted) emit_at(emitted, true);
  };

  const TokenGram input{spec.v0, spec.v0 * spec.rho0};
  ctx.x(0) = spec.input_norm ? detail::normalized(input, gamma_sq, spec.eps) : input;
  if (!admin) detail::start_lanes(ctx);
  const bool lanes = ctx.lanes.m() > 0;
  const StepFn step = admin ? detail::step_admin : detail::step_expression;
  for (int k = 0; k < depth;) {
    if (!std::isfinite(ctx.x(k).diag) || !std::isfinite(ctx.x(k).off) ||
        (lanes && !ctx.lanes.x[std::size_t(k)].finite())) {
      // Overflow (unnormalized stacks grow geometrically): nothing past here is predicted.
      for (int l = k; l <= depth; ++l) ctx.x(l) = {kNaN, kNaN};
      for (int l = k; lanes && l <= depth; ++l) ctx.lanes.x[std::size_t(l)] = {ctx.lanes.m(), {kNaN, kNaN}};
      for (int l = k; l < int(ctx.change.size()); ++l) ctx.change[std::size_t(l)] = {kNaN, kNaN};
      for (int j = k; j < depth; ++j) {
        auto& r = ctx.rec(j);
        r.branch_sq = kNaN, r.cross = kNaN;
        r.anchor = j + 1, r.back = GramMap::scale(kNaN);
        r.anchor_f = j + 1, r.to_branch = GramMap::scale(kNaN);
      }
      break;
    }
    emit_forward(k);  // x_0..x_k and records 0..k-1 are final: a later overflow only rewrites from x_{k+1}
    k += step(ctx, k);
  }
  emit_forward(depth);
  emit_at(depth, false);

  // Output gradient: readout g ~ N(0, 1) iid (Gram (1, 0)). An mse loss gives g = y - t; when y leaves a
  // norm, J_N^T y = 0, so only -t (iid N(0, 1)) propagates and the two losses coincide [DERIVED].
  // A readout matrix scales the seed's second moment by readout_sq and keeps its tokens uncorrelated
  // (StackSpec::readout_sq); every map below is linear in it.
  const double seed = spec.readout_sq.value_or(1.0);
  TokenGram& g_out = ctx.g(depth);
  g_out = {seed, 0.0};
  if (final_norm && pointwise) {
    // y = gamma f(alpha x_K + shift): the readout gradient passes D = diag(gamma alpha f'(u)); g iid unit, so
    // its Gram is {E d^2, 0}, with no finite-width factor (docs/theory_notes.md "Pointwise norms").
    const double mu = ctx.mean[std::size_t(depth)], a = spec.final_norm_alpha;
    if (mu != 0.0 || ctx.raw[std::size_t(depth)]) detail::refuse_non_gaussian();
    const TokenGram centered = ctx.x(depth) + (-mu * mu) * TokenGram{1.0, 1.0};
    const PointwiseMoments m =
        pointwise_moments(spec.norm, a, spec.final_norm_shift + a * mu, centered.diag, centered.off);
    g_out = {seed * gamma_sq * a * a * m.d2, 0.0};
  } else if (final_norm) {
    // theory.md §2.2 P5: E||J^T g||^2 = ||g||^2 (1 - c/d) gamma^2 / (v_K + eps), c = 2 (LN) or 1 (RMSNorm).
    const double c = spec.norm == NormKind::layernorm ? 2.0 : 1.0;
    const double finite_d = spec.width > 0 ? 1.0 - c / spec.width : 1.0;
    // Of lanes, the norm reads their sum (sim/stack_build.cpp build_lanes).
    const double v_out =
        ctx.lanes.n > 1 ? ctx.lanes.x[std::size_t(depth)].sum(ctx.lanes.n).diag : ctx.x(depth).diag;
    g_out = {seed * finite_d * gamma_sq / (v_out + spec.eps), 0.0};  // eps -> 0: bit for bit
  }
  if (lanes) {
    detail::backward_lanes(ctx);
  } else if (ctx.value_residual.edge.empty()) {
    for (int k = depth - 1; k >= 0; --k) {
      const auto& r = ctx.rec(k);
      ctx.g(k) = r.back(ctx.g(r.anchor));
    }
  } else {
    backward_with_value_residual(ctx);
  }

  const bool gradw = grads_predicted && spec.width > 0;
  const MlpDims dims{spec.width > 0 ? spec.width : 0,
                     static_cast<int>(std::lround(spec.mlp_ratio * spec.width)), spec.tokens};
  std::vector<double> g_diag(depth + 1);
  for (int l = 0; l <= depth; ++l) {
    grads_predicted ? keep(p.grad_sq, ctx.g(l).diag) : p.grad_sq.push_back(std::nullopt);
    g_diag[l] = ctx.g(l).diag;
  }
  // Of n > 1 lanes, the Jacobian between single values is not defined (the simulator refuses it).
  p.jac_sq = ctx.lanes.n > 1 ? Series(std::size_t(depth) + 1) : jacobian_sq(g_diag);
  for (int k = 0; k < depth; ++k) {
    const auto& r = ctx.rec(k);
    std::optional<MlpWeightGrads> gw;
    if (gradw) {
      const TokenGram g_branch =
          lanes ? ctx.lanes.branch_grad[std::size_t(k)] : r.to_branch(ctx.g(r.anchor_f));
      if (std::isfinite(g_branch.diag))
        gw = ctx.branch(k).weight_grads(r.branch_in, r.factors, g_branch, dims);
    }
    gw ? keep(p.gradw_w1, gw->w1) : p.gradw_w1.push_back(std::nullopt);
    gw ? keep(p.gradw_w2, gw->w2) : p.gradw_w2.push_back(std::nullopt);
    gw && gw->wgate ? keep(p.gradw_wgate, *gw->wgate) : p.gradw_wgate.push_back(std::nullopt);
    gw && gw->wrouter ? keep(p.gradw_wrouter, *gw->wrouter) : p.gradw_wrouter.push_back(std::nullopt);
  }
  // output_change[l] = ||x'_l - x_l||^2 / ||x_l||^2 to first order in the update (update_sq).
  for (int l = 0; l < int(ctx.change.size()); ++l)
    keep(p.output_change, ctx.change[std::size_t(l)].diag / ctx.x(l).diag);
  for (const auto& [series, index] : dropped) p.nonfinite.push_back({p.name_of(series), index});
  return p;
}

}  // namespace normsim::theory
