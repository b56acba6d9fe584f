// The stack's tape, written once for every device: the record of a forward pass built through StackOps
// (placements build the stack through it) and its reverse pass. A device (sim/cpu/cpu_tape_device.hpp: one
// sample in host memory; gpu/gpu_tape_device.hpp: a batch of S samples on the GPU) supplies the buffers
// and the arithmetic of each op, forward and backward, and the branches; the tape keeps the ops, their
// values and gradients, and the order of the reverse pass. sim/tape_reverse.hpp holds that reverse pass.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/stack_ops.hpp"

namespace normsim::sim {

// How a reverse pass walks the tape (Tape::reverse).
struct ReverseMode {
  // Ops at or below `floor` are not differentiated (values there are held fixed); -1: the whole tape.
  int floor = -1;
  // Whether the branches' weight-gradient norms are metrics of this pass (false: Jacobian probes).
  bool gradw = true;
  // Free each op's value, gradient and saved state once the pass has gone below it (the device tape's
  // memory); the tape cannot be reversed again afterwards.
  bool consume = false;
};

template <class Dev>
class Tape final : public StackOps {
 public:
  using Buffer = typename Dev::Buffer;
  using Aux = typename Dev::Aux;
  using Branch = typename Dev::Branch;

  // The device is built in place from `args` (it may hold references into itself).
  template <class... Args>
  explicit Tape(Args&&... args) : dev_(std::forward<Args>(args)...) {}

  int batch() const override { return dev_.batch(); }
  Value norm(Value x, NormAt at) override;
  Value add(Value a, Value b) override { return push({Kind::add, a.id, b.id}, dev_.add(value(a), value(b))); }
  Value scale(Value a, const Scalars& s) override;
  using StackOps::scale;
  Value branch(int k, Value u, bool qkv_norm) override;
  Value branch_value(int k, Value u, double lam, Value& first) override;
  Scalars mean_sq(Value a) override { return dev_.mean_sq(value(a)); }
  Value project(Value a, Edge e) override;

  Value input(Buffer x) { return push({Kind::input}, dev_.input(std::move(x))); }
  const Buffer& value(Value v) const { return values_[v.id]; }
  const Buffer& grad(Value v) const { return grads_[v.id]; }
  Dev& device() { return dev_; }
  const Dev& device() const { return dev_; }

  // Frees the values no reverse pass reads (a norm's output, or input for a pointwise norm, and a branch's
  // input are read); `keep` lists values the caller still wants.
  void release_forward(const std::vector<Value>& keep);
  // Reverse pass from d(loss)/d(out) = dout. on_grad(w, grad) is called for each watch[w] once its gradient
  // is complete (zeros where out does not depend on it). Defined in sim/tape_reverse.hpp.
  template <class OnGrad>
  void reverse(Value out, Buffer dout, const std::vector<Value>& watch, OnGrad&& on_grad, ReverseMode mode);
  // The whole reverse pass, keeping every gradient (zeros where the loss does not depend on a value).
  void backward(Value out, Buffer dout);
  // Vector-Jacobian products u^T d(out)/d(w) for every w in `watch`, each handed to on_grad(w, grad) once
  // complete; values below the lowest one are held fixed (B2T's saved residual, Admin's omega).
  // Weight-gradient norms are not recorded; `consume` as ReverseMode's. Defined in sim/tape_reverse.hpp.
  template <class OnGrad>
  void vjp(Value out, Buffer u, const std::vector<Value>& watch, OnGrad&& on_grad, bool consume);
  // The same products, copied out.
  std::vector<Buffer> vjp(Value out, Buffer u, const std::vector<Value>& watch);

 private:
  // project: a W_e (sim/edges.hpp); values: a branch's V (a = that branch's op), which Fv branches mix in
  // as V_1.
  enum class Kind { input, norm, add, scale, branch, project, values };
  struct Op {
    Kind kind;
    int a = -1, b = -1;        // operands; a branch's b: the V_1 its values mix in (Fv), or -1
    int k = -1;                // sublayer of a branch
    Edge edge = {};            // the matrix of a project
    bool data = false;         // an input the embedding reads (u): data, whose gradient is not formed
    NormAt at = {};            // a dyt or derf norm's alpha and shift
    bool reads_input = false;  // a norm whose backward reads its input (pointwise) rather than its output
  };
  Value push(Op op, Buffer v) {
    ops_.push_back(op);
    values_.push_back(std::move(v));
    aux_.emplace_back();
    branches_.emplace_back();
    return Value{int(ops_.size()) - 1};
  }
  void differentiate(int i, ReverseMode mode);

  Dev dev_;
  std::vector<Op> ops_;  // op i produced value i
  std::vector<Buffer> values_, grads_;
  std::vector<Aux> aux_;  // per op: a norm's row statistics, a scale's per-sample factors
  std::vector<std::unique_ptr<Branch>> branches_;
  // Per branch op that is V_1's source: dLoss/dV_1 gathered from the Fv branches above it in this pass.
  std::vector<Buffer> values_grads_;
};

template <class Dev>
Value Tape<Dev>::norm(Value x, NormAt at) {
  Op op{Kind::norm, x.id};
  op.at = at;
  op.reads_input = vocab::is_pointwise(dev_.shape().norm);
  Aux aux;
  Buffer y = dev_.norm(value(x), at, aux);
  const Value v = push(op, std::move(y));
  aux_[v.id] = std::move(aux);
  return v;
}

template <class Dev>
Value Tape<Dev>::scale(Value a, const Scalars& s) {
  Aux factors;
  Buffer y = dev_.scale(value(a), s, factors);
  const Value v = push({Kind::scale, a.id}, std::move(y));
  aux_[v.id] = std::move(factors);
  return v;
}

template <class Dev>
Value Tape<Dev>::branch(int k, Value u, bool qkv_norm) {
  std::unique_ptr<Branch> br = dev_.make_branch(k, qkv_norm);
  Buffer out = dev_.branch_forward(*br, value(u), k);
  Op op{Kind::branch, u.id};
  op.k = k;
  const Value v = push(op, std::move(out));
  branches_[v.id] = std::move(br);
  return v;
}

// The branch of an Fv at sublayer k: plain F where it is an MLP; the source of V_1 where no V_1 exists yet
// (its V recorded as a `values` op after it); else attention mixing V_1 into its values, with V_1 as its
// second operand (dLoss/dV_1 flows back through it).
template <class Dev>
Value Tape<Dev>::branch_value(int k, Value u, double lam, Value& first) {
  const BranchKind kind = dev_.shape().branch(k);
  if (kind == BranchKind::mlp) return branch(k, u, false);
  if (kind != BranchKind::attention)
    throw std::invalid_argument("Fv: the value residual mixes self-attention values; sublayer " +
                                std::to_string(k) + " is a cross-attention");
  std::unique_ptr<Branch> br = dev_.make_branch(k, false);
  if (first.valid()) dev_.mix_values(*br, value(first), lam);
  Buffer out = dev_.branch_forward(*br, value(u), k);
  Op op{Kind::branch, u.id, first.valid() ? first.id : -1};
  op.k = k;
  const Value v = push(op, std::move(out));
  branches_[v.id] = std::move(br);
  if (!first.valid()) first = push({Kind::values, v.id}, dev_.branch_values(*branches_[v.id]));
  return v;
}

template <class Dev>
Value Tape<Dev>::project(Value a, Edge e) {
  Op op{Kind::project, a.id};
  op.edge = e;
  if (ops_[a.id].kind == Kind::input) ops_[a.id].data = true;
  return push(op, dev_.project(value(a), e));
}

template <class Dev>
void Tape<Dev>::release_forward(const std::vector<Value>& keep) {
  std::vector<bool> needed(values_.size(), false);
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].kind == Kind::norm) needed[ops_[i].reads_input ? std::size_t(ops_[i].a) : i] = true;
    if (ops_[i].kind == Kind::branch || ops_[i].kind == Kind::project) needed[ops_[i].a] = true;
  }
  for (const Value v : keep) needed[v.id] = true;
  for (std::size_t i = 0; i < values_.size(); ++i)
    if (!needed[i]) Dev::free(values_[i]);
}

}  // namespace normsim::sim

#include "sim/tape_reverse.hpp"
