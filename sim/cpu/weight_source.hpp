// Where the CPU branches (sim/cpu/cpu_projections.hpp and the devices deriving from it) get the weight
// matrices of one sublayer of one sample, and where their weight gradients go: Philox draws (W + dW under an
// applied update), kept or redrawn, the forward products with their bias and bf16 rounding, and the
// gradients' norms.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/bf16.hpp"
#include "sim/cpu/cpu_branches.hpp"
#include "sim/cpu/cpu_parallel.hpp"
#include "sim/cpu/drawn_product.hpp"
#include "sim/cpu/frobenius.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/draws.hpp"
#include "sim/init.hpp"
#include "sim/thread_split.hpp"
#include "sim/unit_norm.hpp"

namespace normsim::sim {

// Draws and redraws the weight matrices of sublayer k of one sample into a workspace (W + dW when the hooks
// apply a parameter update), or draws each once per pass where the workspace keeps them, and hands the loss's
// weight gradients to an update that records them. Holds the shape and placement by reference: the graph that
// owns the branch owns them too.
template <class R>
struct WeightSource {
  const StackShape& s;
  const Placement& p;
  int k;
  SampleKey key;
  UpdateHooks<R> hooks;
  std::uint32_t index = 0;  // the expert of a routed MLP (WeightId's index); 0 for every other branch

  const Mat<R>& draw(WeightKind w, CpuWorkspace<R>& ws) const {
    if (!ws.keep_weights) return draw_into(ws.weight, w, ws.threads);
    const auto [m, to_draw] = kept(w, ws);
    if (to_draw) draw_into(*m, w, ws.threads);
    return *m;
  }
  // Whether the products run in bf16 (sim/bf16.hpp): u and W rounded, the output (bias added) rounded.
  bool bf16() const { return s.cfg.precision == vocab::Precision::bf16; }
  // out = u W (+ 1 b^T where w has a bias) for the forward, then after(first, count) on each finished
  // block of columns. In bf16 u is read rounded and the bias is added before the output's one rounding, as
  // addmm's epilogue does.
  template <class After>
  void multiply(Mat<R>& out, const Mat<R>& u, WeightKind w, CpuWorkspace<R>& ws, After after) const {
    Mat<R> rounded;
    const Mat<R>& x = bf16_operand(bf16(), u, rounded);
    Mat<R> b;
    if (has_bias(s.cfg, w)) draw_bias(b, w);
    multiply_unbiased(out, x, w, ws, [&](Eigen::Index f, Eigen::Index c) {
      if (b.size()) out.middleCols(f, c).rowwise() += b.row(0).segment(f, c);
      round_to_bf16_if<R>(bf16(), out.middleCols(f, c));
      after(f, c);
    });
    if (hooks.probe) hooks.probe->input(k, int(w), x);  // after the product has drawn (and stepped) W
  }
  void multiply(Mat<R>& out, const Mat<R>& u, WeightKind w, CpuWorkspace<R>& ws) const {
    multiply(out, u, w, ws, [](Eigen::Index, Eigen::Index) {});
  }
  // Matrix w's bias b (1 x fan_out), b + dB when the hooks apply an update.
  void draw_bias(Mat<R>& b, WeightKind w) const {
    const DrawKey bias_key{key.seed, key.sample, std::uint32_t(k),
                           param_stream(WeightId{w, index}, Part::bias)};
    draw_matrix(b, 1, s.fan_out(w), bias_key, bias_std(s.cfg), 1);
    if (hooks.apply) hooks.apply->apply(k, w, b, Part::bias);
    round_to_bf16_if<R>(bf16(), b);
  }
  // out = u W, W as draw() gives it (and kept as draw() keeps it). In float32 with thin_gemm W is drawn strip
  // by strip as the product reads it (drawn_product.hpp: the same bits), unless this pass already drew it or
  // an update hook or a unit-norm rule (which reads whole columns) changes it after the draw.
  template <class After>
  void multiply_unbiased(Mat<R>& out, const Mat<R>& u, WeightKind w, CpuWorkspace<R>& ws, After after) const {
    // A compile-time test first: without AVX-512 the drawn product is not built at all.
    if constexpr (std::is_same_v<R, float> && has_thin_gemm) {
      if (drawn_product_fits(s.fan_out(w)) && !hooks.apply && !unit_norm(s, p, k, w) && !bf16()) {
        Mat<R>* keep = nullptr;
        if (ws.keep_weights) {
          const auto [m, to_draw] = kept(w, ws);
          if (!to_draw) return product_by_columns(out, u, *m, false, ws.threads, after);
          keep = m;
        }
        return drawn_product(out, u, draw_key(w), weight_std(s, p, k, w), s.fan_out(w), keep, ws.threads,
                             after);
      }
    }
    product_by_columns(out, u, draw(w, ws), false, ws.threads, after);
  }
  const Mat<R>& draw_into(Mat<R>& m, WeightKind w, int threads) const {
    draw_matrix(m, s.fan_in(w), s.fan_out(w), draw_key(w), weight_std(s, p, k, w), threads);
    if (const std::optional<UnitNorm> unit = unit_norm(s, p, k, w))
      normalize_weight(m.data(), int(m.rows()), int(m.cols()), *unit);
    if (hooks.apply) hooks.apply_weight(k, w, m);
    round_to_bf16_if<R>(bf16(), m);  // the float32 master weight, cast at its use
    return m;
  }
  DrawKey draw_key(WeightKind w) const {
    return {key.seed, key.sample, std::uint32_t(k), weight_stream(WeightId{w, index})};
  }
  // With keep_weights: matrix w's kept buffer (the workspace grown to hold it), and whether this pass has
  // yet to draw it, which the caller then does (the slot counts as drawn by this pass from here on).
  std::pair<Mat<R>*, bool> kept(WeightKind w, CpuWorkspace<R>& ws) const {
    const std::size_t slot =
        (std::size_t(index) * std::size_t(s.depth) + std::size_t(k)) * kWeightKinds + std::size_t(w);
    if (ws.kept.size() <= slot) {
      ws.kept.resize(slot + 1);
      ws.kept_pass.resize(slot + 1, 0);
    }
    const bool to_draw = ws.kept_pass[slot] != ws.pass;
    ws.kept_pass[slot] = ws.pass;
    return {&ws.kept[slot], to_draw};
  }
  // dLoss/dW = A^T B of matrix w (A the matrix's input, B the gradient of its output), and dLoss/db = 1^T B
  // of its bias, when recorded.
  void record(WeightKind w, const Mat<R>& A, const Mat<R>& B) const {
    if (!hooks.record || !hooks.record->needs_gradients()) return;
    hooks.record->set_product_gradient(k, w, A, B);
    if (has_bias(s.cfg, w)) hooks.record->set_gradient(k, w, B.colwise().sum(), Part::bias);
  }
};

// Weight-gradient norms ||A^T B||_F of independent pairs, computed concurrently: each is one
// frobenius_of_AtB whichever thread runs it.
template <class R>
void gradient_norms(const std::vector<std::tuple<double*, const Mat<R>*, const Mat<R>*>>& v, int threads) {
  double work = 0;  // the Grams of A and B: 2 T^2 (a + b) for T rows
  for (const auto& [out, a, b] : v)
    work += 2.0 * double(a->rows()) * double(a->rows()) * double(a->cols() + b->cols());
  for_each_run(v.size(), work, threads, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      *std::get<0>(v[i]) = frobenius_of_AtB<R>(*std::get<1>(v[i]), *std::get<2>(v[i]));
  });
}

}  // namespace normsim::sim
