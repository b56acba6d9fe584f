// The CPU device of the MLP branch (sim/mlp_branch.hpp): one sample, T x n Eigen matrices, weights from a
// WeightSource (sim/cpu/weight_source.hpp; in float32 drawn strip by strip as the product reads them), the
// products shared with attention in sim/cpu/cpu_projections.hpp. Every
// product runs by column blocks on the workspace's threads with the activation (or its backward) fused into
// each finished block; float32 GELU, SiLU and tanh are vectorised (sim/cpu/activations_vec.hpp), GELU's and
// SiLU's gate kept from the forward so the backward rebuilds the same bits from it.
#pragma once
#include <limits>
#include <type_traits>

#include "sim/cpu/activations_vec.hpp"
#include "sim/cpu/cpu_projections.hpp"

namespace normsim::sim {

template <class R>
class CpuMlpDevice : public CpuProjections<R> {
  using CpuProjections<R>::w_;
  using CpuProjections<R>::ws_;

 public:
  struct Hidden {
    Mat<R> h, g;  // pre-activations u W1 (T x H) and, for SwiGLU, u Wgate
    Mat<R> gate;  // the kept gate of the activation's input (keeps_gate: GELU's Phi, SiLU's sigmoid(-|z|))
  };

  using CpuProjections<R>::CpuProjections;

  bool swiglu() const { return w_.s.swiglu; }
  void release(Hidden&) const {}  // the buffers are reused by the next pass

  void project_activated(const Mat<R>& u, WeightKind w, Hidden& hid, Mat<R>& a) const {
    a.resize(u.rows(), w_.s.hidden);
    if (keeps_gate<R>(w_.s.act)) hid.gate.resize(u.rows(), w_.s.hidden);
    w_.multiply(hid.h, u, w, ws_,
                [&](Eigen::Index f, Eigen::Index c) { activate_columns(hid, a, f, c, true); });
  }
  Mat<R> activations(Hidden& hid) const {
    Mat<R> a(hid.h.rows(), hid.h.cols());
    const double work = 32.0 * double(hid.h.size());  // erf/exp per entry: tens of operations
    for_column_blocks(hid.h.cols(), work, ws_.threads,
                      [&](Eigen::Index f, Eigen::Index c) { activate_columns(hid, a, f, c, false); });
    return a;
  }
  void back_project_activated(const Mat<R>& dy, WeightKind w, const Hidden& hid, Mat<R>& dh,
                              Mat<R>& dg) const;

 private:
  // The activation's input: h, or g for SwiGLU (whose activations are silu(g) * h).
  const Mat<R>& act_input(const Hidden& hid) const { return w_.s.swiglu ? hid.g : hid.h; }
  // The kept gate's row t from column f, null where the activation keeps none (keeps_gate).
  static const R* gate_row(const Hidden& hid, Eigen::Index t, Eigen::Index f) {
    return hid.gate.size() ? &hid.gate(t, f) : nullptr;
  }

  void activate_columns(Hidden& hid, Mat<R>& a, Eigen::Index f, Eigen::Index c, bool keep) const;
  template <class Block>
  void multiply_by_act_derivative(const Hidden& hid, Block&& d, Eigen::Index f, Eigen::Index c) const;
  template <class Block>
  void multiply_by_act(const Hidden& hid, Block&& d, Eigen::Index f, Eigen::Index c) const;
};

// Columns [f, f + c) of the activations a: act(h), or silu(g) * h for SwiGLU. The forward (keep) computes
// them and keeps the vectorised activations' gate; the backward rebuilds them from that gate (the same bits)
// or from h.
template <class R>
void CpuMlpDevice<R>::activate_columns(Hidden& hid, Mat<R>& a, Eigen::Index f, Eigen::Index c,
                                       bool keep) const {
  const Mat<R>& z = act_input(hid);
  const Activation act = w_.s.act;
  bool done = false;
  if constexpr (std::is_same_v<R, float>) {
    if ((done = vectorised<R>(act)))
      for (Eigen::Index t = 0; t < z.rows(); ++t) {
        if (keep || !keeps_gate<R>(act))
          activate_row(act, &z(t, f), keep && hid.gate.size() ? &hid.gate(t, f) : nullptr, &a(t, f), c);
        else
          activate_row_from_gate(act, &z(t, f), gate_row(hid, t, f), &a(t, f), c);
      }
  }
  if (!done) activate_block(act, z.middleCols(f, c), a.middleCols(f, c));
  // bf16: act(z) is an op on a bf16 product (rounded), and so is SwiGLU's product with h.
  round_to_bf16_if<R>(w_.bf16(), a.middleCols(f, c));
  if (w_.s.swiglu) a.middleCols(f, c) = a.middleCols(f, c).cwiseProduct(hid.h.middleCols(f, c));
  if (w_.s.swiglu) round_to_bf16_if<R>(w_.bf16(), a.middleCols(f, c));
}

// da = dy W^T, then turned into dh (and dg) block by block as the product finishes each.
template <class R>
void CpuMlpDevice<R>::back_project_activated(const Mat<R>& dy, WeightKind w, const Hidden& hid, Mat<R>& dh,
                                             Mat<R>& dg) const {
  const bool bf16 = w_.bf16();
  if (w_.s.swiglu) dg.resize(hid.h.rows(), hid.h.cols());
  product_by_columns(dh, dy, w_.draw(w, ws_).transpose(), false, ws_.threads,
                     [&](Eigen::Index f, Eigen::Index c) {
                       auto da = dh.middleCols(f, c);
                       round_to_bf16_if<R>(bf16, da);
                       if (w_.s.swiglu) {
                         // a = silu(g) * h:  dg = da * h * silu'(g),  dh = da * silu(g)
                         dg.middleCols(f, c) = da.cwiseProduct(hid.h.middleCols(f, c));
                         round_to_bf16_if<R>(bf16, dg.middleCols(f, c));
                         multiply_by_act_derivative(hid, dg.middleCols(f, c), f, c);
                         round_to_bf16_if<R>(bf16, dg.middleCols(f, c));
                         multiply_by_act(hid, da, f, c);
                       } else {
                         multiply_by_act_derivative(hid, da, f, c);
                       }
                       round_to_bf16_if<R>(bf16, da);
                     });
}

// d *= act'(z) on columns [f, f + c) of the activation's input z (d is that block of a T x H matrix).
template <class R>
template <class Block>
void CpuMlpDevice<R>::multiply_by_act_derivative(const Hidden& hid, Block&& d, Eigen::Index f,
                                                 Eigen::Index c) const {
  const Mat<R>& z = act_input(hid);
  if constexpr (std::is_same_v<R, float>) {
    if (vectorised<R>(w_.s.act)) {
      for (Eigen::Index t = 0; t < z.rows(); ++t)
        multiply_row_by_derivative(w_.s.act, &z(t, f), gate_row(hid, t, f), &d(t, 0), c);
      return;
    }
  }
  multiply_by_derivative(w_.s.act, z.middleCols(f, c), d);
}

// d *= act(z) on columns [f, f + c) (SwiGLU's dh = da * silu(g)).
template <class R>
template <class Block>
void CpuMlpDevice<R>::multiply_by_act(const Hidden& hid, Block&& d, Eigen::Index f, Eigen::Index c) const {
  const Mat<R>& z = act_input(hid);
  Mat<R> y(d.rows(), c);
  bool done = false;
  if constexpr (std::is_same_v<R, float>) {
    if ((done = keeps_gate<R>(w_.s.act)))
      for (Eigen::Index t = 0; t < z.rows(); ++t)
        activate_row_from_gate(w_.s.act, &z(t, f), gate_row(hid, t, f), &y(t, 0), c);
  }
  if (!done) activate_block(w_.s.act, z.middleCols(f, c), y);
  round_to_bf16_if<R>(w_.bf16(), y);  // silu(g) as the forward stored it
  d = d.cwiseProduct(y);
}

}  // namespace normsim::sim
