#include "gpu/gpu_graph.hpp"

#include <limits>
#include <stdexcept>

#include "gpu/kernels.hpp"

namespace normsim::gpu {

using sim::Value;

template <class R>
GpuGraph<R>::GpuGraph(const sim::StackShape& shape, const sim::Placement& placement, const GpuContext<R>& ctx)
    : shape_(shape), placement_(placement), ctx_(ctx) {
  if (!ctx.stats) throw std::invalid_argument("GpuGraph: the context has no DeviceStats");
}

template <class R>
Value GpuGraph<R>::push(Op op, DeviceBuffer<R> v) {
  ops_.push_back(op);
  values_.push_back(std::move(v));
  aux_.emplace_back();
  branches_.emplace_back();
  return Value{int(ops_.size()) - 1};
}

template <class R>
Value GpuGraph<R>::input(DeviceBuffer<R> x) {
  if (x.size() != value_size()) throw std::invalid_argument("GpuGraph::input: wrong size");
  return push(Op{Kind::input}, std::move(x));
}

template <class R>
Value GpuGraph<R>::norm(Value x, sim::NormAt at) {
  const int rows = ctx_.S * shape_.tokens;
  DeviceBuffer<R> y(value_size());
  if (vocab::is_pointwise(shape_.norm)) {
    pointwise_norm_forward(values_[x.id].get(), y.get(), value_size(), pointwise(at));
    Op op{Kind::norm, x.id};
    op.at = at;
    return push(op, std::move(y));
  }
  DeviceBuffer<double> rstd(rows);
  row_norm_forward(values_[x.id].get(), y.get(), rstd.get(), rows, shape_.width, shape_.norm,
                   shape_.cfg.norm_gain, shape_.cfg.norm_eps);
  const Value v = push(Op{Kind::norm, x.id}, std::move(y));
  aux_[v.id] = std::move(rstd);
  return v;
}

template <class R>
Value GpuGraph<R>::add(Value a, Value b) {
  DeviceBuffer<R> y(value_size());
  scaled_sum(y.get(), values_[a.id].get(), static_cast<const double*>(nullptr), values_[b.id].get(),
             value_size(), 1, false);
  return push(Op{Kind::add, a.id, b.id}, std::move(y));
}

template <class R>
Value GpuGraph<R>::scale(Value a, const sim::Scalars& s) {
  if (int(s.size()) != ctx_.S) throw std::invalid_argument("GpuGraph::scale: one factor per sample expected");
  DeviceBuffer<double> d_s = DeviceBuffer<double>::from_host(s);
  DeviceBuffer<R> y(value_size());
  const std::size_t per = value_size() / ctx_.S;
  scaled_sum(y.get(), values_[a.id].get(), d_s.get(), static_cast<const R*>(nullptr), per, ctx_.S, false);
  const Value v = push(Op{Kind::scale, a.id}, std::move(y));
  aux_[v.id] = std::move(d_s);
  return v;
}

template <class R>
Value GpuGraph<R>::branch(int k, Value u, bool qkv_norm) {
  auto br = make_gpu_branch<R>(shape_, placement_, k, ctx_, qkv_norm);
  DeviceBuffer<R> out = br->forward(values_[u.id].get());
  sample_dot(out.get(), out.get(), value_size() / ctx_.S, ctx_.S, ctx_.stats->field(k, lf_branch_sum));
  const Value v = push(Op{Kind::branch, u.id, -1, k}, std::move(out));
  branches_[v.id] = std::move(br);
  return v;
}

// Admin's omega needs the value on the host: the one synchronization inside a forward pass.
template <class R>
sim::Scalars GpuGraph<R>::mean_sq(Value a) {
  const std::size_t per = value_size() / ctx_.S;
  DeviceBuffer<double> d_out(ctx_.S);
  sample_dot(values_[a.id].get(), values_[a.id].get(), per, ctx_.S, d_out.get());
  std::vector<double> out = d_out.to_host();
  for (double& v : out) v /= double(per);
  return out;
}

template <class R>
void GpuGraph<R>::release_forward(const std::vector<Value>& keep) {
  std::vector<bool> needed(values_.size(), false);
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].kind == Kind::norm)  // the backward reads y, or x for a pointwise norm (dyt, derf)
      needed[vocab::is_pointwise(shape_.norm) ? std::size_t(ops_[i].a) : i] = true;
    if (ops_[i].kind == Kind::branch) needed[ops_[i].a] = true;  // the branch reads its input
  }
  for (const Value v : keep) needed[v.id] = true;
  for (std::size_t i = 0; i < values_.size(); ++i)
    if (!needed[i]) values_[i].reset();
}

template <class R>
void GpuGraph<R>::accumulate(int id, const R* d_g, const double* d_scale) {
  const std::size_t per = value_size() / ctx_.S;
  const bool first = grads_[id].empty();
  if (first) grads_[id] = DeviceBuffer<R>(value_size());
  scaled_sum(grads_[id].get(), d_g, d_scale, static_cast<const R*>(nullptr), per, ctx_.S, !first);
}

template <class R>
void GpuGraph<R>::backward(Value out, DeviceBuffer<R> dout, const std::vector<Value>& watch,
                           const std::function<void(int, const R*)>& on_grad) {
  grads_.clear();
  grads_.resize(values_.size());
  grads_[out.id] = std::move(dout);
  std::vector<std::vector<int>> watchers(values_.size());
  for (std::size_t w = 0; w < watch.size(); ++w) watchers[watch[w].id].push_back(int(w));
  const int rows = ctx_.S * shape_.tokens;
  for (int i = int(ops_.size()) - 1; i >= 0; --i) {
    if (!grads_[i].empty()) {
      const Op& op = ops_[i];
      const R* g = grads_[i].get();
      switch (op.kind) {
        case Kind::input:
          break;
        case Kind::add:
          accumulate(op.a, g, nullptr);
          accumulate(op.b, g, nullptr);
          break;
        case Kind::scale:
          accumulate(op.a, g, aux_[i].get());
          break;
        case Kind::norm: {
          const bool first = grads_[op.a].empty();
          if (first) grads_[op.a] = DeviceBuffer<R>(value_size());
          if (vocab::is_pointwise(shape_.norm)) {
            pointwise_norm_backward(values_[op.a].get(), g, grads_[op.a].get(), value_size(),
                                    pointwise(op.at), !first);
            break;
          }
          row_norm_backward(values_[i].get(), g, grads_[op.a].get(), aux_[i].get(), rows, shape_.width,
                            shape_.norm, shape_.cfg.norm_gain, !first);
          break;
        }
        case Kind::branch: {
          DeviceBuffer<R> du = branches_[i]->backward(g, ctx_.stats->field(op.k, lf_gradw));
          if (grads_[op.a].empty())
            grads_[op.a] = std::move(du);
          else
            accumulate(op.a, du.get(), nullptr);
          break;
        }
      }
    }
    if (!watchers[i].empty()) {
      // A value the loss does not depend on has a zero gradient (ReZero at alpha = 0 reaches here).
      if (grads_[i].empty()) {
        grads_[i] = DeviceBuffer<R>(value_size());
        grads_[i].zero();
      }
      for (const int w : watchers[i]) on_grad(w, grads_[i].get());
    }
    grads_[i].reset();
    branches_[i].reset();
    aux_[i].reset();
    values_[i].reset();
  }
}

template class GpuGraph<float>;
template class GpuGraph<double>;

}  // namespace normsim::gpu
