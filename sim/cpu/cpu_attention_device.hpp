// The CPU device of the attention branch (sim/attention_branch.hpp): one sample, its heads run in parallel on
// the workspace's threads (sim/cpu/cpu_heads.hpp), each normalizing its own slices of Q, K (and V) inside its
// task; the products shared with the MLP in sim/cpu/cpu_projections.hpp.
#pragma once
#include <vector>

#include "sim/attention_branch.hpp"
#include "sim/cpu/cpu_heads.hpp"
#include "sim/cpu/cpu_projections.hpp"
#include "sim/softmax.hpp"

namespace normsim::sim {

template <class R>
class CpuAttentionDevice : public CpuProjections<R> {
 public:
  struct Heads {
    Mat<R> q, k, v;     // the projections (v mixed with V_1 where the value residual says)
    Mat<R> qn, kn, vn;  // after their norms, where there are norms (sim/head_norms.hpp)
    std::vector<double> rq, rk, rv;
    std::vector<Mat<R>> probs;  // per head: softmax of its logits (T x T)
    Mat<R> o, z, og;            // the heads' output, the gate's pre-activations u Wga (T x G), O gated
    Mat<R> enc;                 // the decoder's encoder output (cross-attention)
    bool og_formed = false;     // og is this pass's (attend starts a pass)
    // Q, K, V as the logits and the mixing read them.
    const Mat<R>& q_read(const HeadNorms& n) const { return n.qk ? qn : q; }
    const Mat<R>& k_read(const HeadNorms& n) const { return n.qk ? kn : k; }
    const Mat<R>& v_read(const HeadNorms& n) const { return n.v ? vn : v; }
  };

  CpuAttentionDevice(const WeightSource<R>& w, CpuWorkspace<R>& ws, const AttentionShape& a)
      : CpuProjections<R>(w, ws), a_(a) {}

  void attend(Heads& h) const;
  void attend_backward(const Heads& h, const Mat<R>& d_o, Mat<R>& dq, Mat<R>& dk, Mat<R>& dv) const;
  // What Wo reads: O, or with a gate (sim/attention_gate.hpp) og = O * sigmoid(z), each gate covering
  // `group` coordinates, formed once a pass and kept for the backward.
  const Mat<R>& wo_input(Heads& h, Mat<R>&) const {
    if (!a_.group || h.og_formed) return a_.group ? h.og : h.o;
    h.og.resize(h.o.rows(), h.o.cols());
    for (Eigen::Index t = 0; t < h.o.rows(); ++t)
      for (Eigen::Index j = 0; j < h.z.cols(); ++j)
        gate_forward_group(&h.o(t, j * a_.group), &h.og(t, j * a_.group), double(h.z(t, j)), a_.group);
    h.og_formed = true;
    return h.og;
  }
  void gate_backward(const Heads& h, Mat<R>& d_o, Mat<R>& dz) const {
    dz.resize(h.z.rows(), h.z.cols());
    for (Eigen::Index t = 0; t < h.z.rows(); ++t)
      for (Eigen::Index j = 0; j < h.z.cols(); ++j)
        dz(t, j) = R(gate_backward_group(&h.o(t, j * a_.group), &d_o(t, j * a_.group), &d_o(t, j * a_.group),
                                         double(h.z(t, j)), a_.group));
  }
  static void mix_values(Mat<R>& v, const ValueResidual<Mat<R>>& r) {
    v = v * R(1.0 - r.lam) + *r.first * R(r.lam);
  }
  // dv = dLoss/dV (mixed, as the heads read it): dLoss/dV_1 = lam dv is handed out and V's own share is
  // (1 - lam) dv; V_1's source adds what the mixing branches sent it.
  static void mix_values_backward(Mat<R>& dv, ValueResidual<Mat<R>>& r) {
    if (r.mixes) {
      r.first_grad = dv * R(r.lam);
      dv *= R(1.0 - r.lam);
    }
    if (r.extra_grad.size() != 0) {
      dv += r.extra_grad;
      r.extra_grad = Mat<R>();
    }
  }
  static void release(Heads&) {}  // the buffers are reused by the next pass

 private:
  // dLoss/d of the norms' outputs (per head: a head's norm backward reads its columns only).
  struct NormedGrads {
    Mat<R> gq, gk, gv;
  };
  bool per_head_qk() const { return a_.norms.qk && !a_.norms.qk_whole; }
  bool whole_qk() const { return a_.norms.qk && a_.norms.qk_whole; }
  // The buffers of a norm's output y and its rstd (slices per row), sized for T x d before they are filled.
  static void size_normed(bool on, Mat<R>& y, std::vector<double>& rstd, int T, int d, int slices) {
    if (!on) return;
    y.resize(T, d);
    rstd.resize(std::size_t(T) * slices);
  }
  void attend_head(Heads& h, int head) const;
  void backpropagate_head(const Heads& h, int head, const Mat<R>& d_o, Mat<R>& dq, Mat<R>& dk, Mat<R>& dv,
                          NormedGrads& g) const;

  const AttentionShape& a_;
};

template <class R>
void CpuAttentionDevice<R>::attend(Heads& h) const {
  const int T = int(h.q.rows()), d = int(h.q.cols());
  const HeadNorms& n = a_.norms;
  size_normed(n.qk, h.qn, h.rq, T, d, n.qk_slices(a_.heads));
  size_normed(n.qk, h.kn, h.rk, T, d, n.qk_slices(a_.heads));
  size_normed(n.v, h.vn, h.rv, T, d, a_.heads);
  if (whole_qk()) {  // OLMo-2: each Q and K row normalized whole before any head reads its slice
    head_norm_forward(n.kind, h.q, h.qn, h.rq, 1, 0, a_.gain, a_.eps);
    head_norm_forward(n.kind, h.k, h.kn, h.rk, 1, 0, a_.gain, a_.eps);
  }
  h.probs.resize(std::size_t(a_.heads));
  h.o.resize(T, d);
  h.og_formed = false;
  for_each_head(a_.heads, head_forward_work(T, d / a_.heads), this->ws_.threads,
                [&](int head) { attend_head(h, head); });
}

// Head `head` of the forward: its norms of Q, K, V, its softmax(logits) and its columns of O.
template <class R>
void CpuAttentionDevice<R>::attend_head(Heads& h, int head) const {
  const int T = int(h.o.rows()), dh = int(h.o.cols()) / a_.heads;
  const HeadNorms& n = a_.norms;
  if (per_head_qk()) {
    head_norm_forward(n.kind, h.q, h.qn, h.rq, a_.heads, head, a_.gain, a_.eps);
    head_norm_forward(n.kind, h.k, h.kn, h.rk, a_.heads, head, a_.gain, a_.eps);
  }
  if (n.v) head_norm_forward(n.kind, h.v, h.vn, h.rv, a_.heads, head, a_.gain, a_.eps);
  Mat<R> sc = head_logits(h.q_read(n), h.k_read(n), head, dh, a_.logit_scale);
  for (int t = 0; t < T; ++t) softmax_row(&sc(t, 0), T, a_.causal ? t : T - 1);
  h.o.middleCols(head * dh, dh).noalias() = sc * h.v_read(n).middleCols(head * dh, dh);
  h.probs[std::size_t(head)] = std::move(sc);
}

template <class R>
void CpuAttentionDevice<R>::attend_backward(const Heads& h, const Mat<R>& d_o, Mat<R>& dq, Mat<R>& dk,
                                            Mat<R>& dv) const {
  const int T = int(d_o.rows()), d = int(d_o.cols());
  const HeadNorms& n = a_.norms;
  NormedGrads g;
  dq.resize(T, d), dk.resize(T, d), dv.resize(T, d);
  if (n.qk) g.gq.resize(T, d), g.gk.resize(T, d);
  if (n.v) g.gv.resize(T, d);
  for_each_head(a_.heads, head_backward_work(T, d / a_.heads), this->ws_.threads,
                [&](int head) { backpropagate_head(h, head, d_o, dq, dk, dv, g); });
  if (whole_qk()) {  // every head's columns of g.gq and g.gk are in: the whole rows' norm backward
    head_norm_backward(n.kind, h.qn, g.gq, h.rq, 1, 0, a_.gain, dq);
    head_norm_backward(n.kind, h.kn, g.gk, h.rk, 1, 0, a_.gain, dk);
  }
}

// Head `head` of the backward, from d_o = dLoss/dO: its columns of dq, dk, dv (through g where normed).
template <class R>
void CpuAttentionDevice<R>::backpropagate_head(const Heads& h, int head, const Mat<R>& d_o, Mat<R>& dq,
                                               Mat<R>& dk, Mat<R>& dv, NormedGrads& g) const {
  const int T = int(d_o.rows()), dh = int(d_o.cols()) / a_.heads;
  const HeadNorms& n = a_.norms;
  const Mat<R>& P = h.probs[std::size_t(head)];
  const auto doh = d_o.middleCols(head * dh, dh);
  Mat<R>&gq = n.qk ? g.gq : dq, &gk = n.qk ? g.gk : dk, &gv = n.v ? g.gv : dv;
  gv.middleCols(head * dh, dh).noalias() = P.transpose() * doh;
  Mat<R> dP = doh * h.v_read(n).middleCols(head * dh, dh).transpose();
  for (int t = 0; t < T; ++t) softmax_backward_row(&P(t, 0), &dP(t, 0), T, a_.logit_scale);
  gq.middleCols(head * dh, dh).noalias() = dP * h.k_read(n).middleCols(head * dh, dh);
  gk.middleCols(head * dh, dh).noalias() = dP.transpose() * h.q_read(n).middleCols(head * dh, dh);
  if (per_head_qk()) {
    head_norm_backward(n.kind, h.qn, g.gq, h.rq, a_.heads, head, a_.gain, dq);
    head_norm_backward(n.kind, h.kn, g.gk, h.rk, a_.heads, head, a_.gain, dk);
  }
  if (n.v) head_norm_backward(n.kind, h.vn, g.gv, h.rv, a_.heads, head, a_.gain, dv);
}

}  // namespace normsim::sim
