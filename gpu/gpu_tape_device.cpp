#include "gpu/gpu_tape_device.hpp"

#include "gpu/blas.hpp"
#include "gpu/gpu_update_probe.hpp"
#include "gpu/ops.hpp"
#include "sim/edges.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
GpuTapeDevice<R>::GpuTapeDevice(const sim::StackShape& shape, const sim::Placement& placement,
                                const GpuContext<R>& ctx)
    : shape_(shape), placement_(placement), ctx_(ctx) {
  if (!ctx.stats) throw std::invalid_argument("GpuTape: the context has no DeviceStats");
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::input(DeviceBuffer<R> x) const {
  const std::size_t u =
      std::size_t(ctx_.S) * shape_.tokens * sim::edge_dims(shape_.cfg, sim::Edge::embedding).rows;
  if (x.size() != value_size() && !(sim::has_embedding(shape_.cfg) && x.size() == u))
    throw std::invalid_argument("GpuTape::input: wrong size");
  return x;
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::zeros() const {
  DeviceBuffer<R> z(value_size());
  z.zero();
  return z;
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::copy(const DeviceBuffer<R>& b) const {
  DeviceBuffer<R> c(b.size());
  copy_on_device(c.get(), b.get(), b.size() * sizeof(R));
  return c;
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::norm(const DeviceBuffer<R>& x, sim::NormAt at,
                                       DeviceBuffer<double>& rstd) const {
  DeviceBuffer<R> y(value_size());
  if (vocab::is_pointwise(shape_.norm)) {
    pointwise_norm_forward(x.get(), y.get(), value_size(), pointwise(at));
    return y;
  }
  const int rows = ctx_.S * shape_.tokens;
  rstd = DeviceBuffer<double>(rows);
  row_norm_forward(x.get(), y.get(), rstd.get(), rows, shape_.width, shape_.norm, shape_.cfg.norm_gain,
                   shape_.cfg.norm_eps);
  return y;
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::add(const DeviceBuffer<R>& a, const DeviceBuffer<R>& b) const {
  DeviceBuffer<R> y(value_size());
  scaled_sum(y.get(), a.get(), static_cast<const double*>(nullptr), b.get(), value_size(), 1, false);
  return y;
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::scale(const DeviceBuffer<R>& a, const sim::Scalars& s,
                                        DeviceBuffer<double>& factors) const {
  if (int(s.size()) != ctx_.S) throw std::invalid_argument("GpuTape::scale: one factor per sample expected");
  factors = DeviceBuffer<double>::from_host(s);
  DeviceBuffer<R> y(value_size());
  const std::size_t per = value_size() / ctx_.S;
  scaled_sum(y.get(), a.get(), factors.get(), static_cast<const R*>(nullptr), per, ctx_.S, false);
  return y;
}

template <class R>
sim::Scalars GpuTapeDevice<R>::mean_sq(const DeviceBuffer<R>& a) const {
  const std::size_t per = value_size() / ctx_.S;
  DeviceBuffer<double> d_out(ctx_.S);
  sample_dot(a.get(), a.get(), per, ctx_.S, d_out.get());
  std::vector<double> out = d_out.to_host();
  for (double& v : out) v /= double(per);
  return out;
}

template <class R>
std::unique_ptr<GpuBranch<R>> GpuTapeDevice<R>::make_branch(int k, bool qkv_norm) const {
  return make_gpu_branch<R>(shape_, placement_, k, ctx_, qkv_norm);
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::branch_forward(GpuBranch<R>& br, const DeviceBuffer<R>& u, int k) const {
  DeviceBuffer<R> out = br.forward(u.get());
  sample_dot(out.get(), out.get(), value_size() / ctx_.S, ctx_.S, ctx_.stats->field(k, lf_branch_sum));
  return out;
}

template <class R>
void GpuTapeDevice<R>::add_scaled(DeviceBuffer<R>& into, const R* d_g, const double* d_factors) const {
  const std::size_t per = value_size() / ctx_.S;
  const bool first = into.empty();
  if (first) into = DeviceBuffer<R>(value_size());
  scaled_sum(into.get(), d_g, d_factors, static_cast<const R*>(nullptr), per, ctx_.S, !first);
}

template <class R>
void GpuTapeDevice<R>::add_to(DeviceBuffer<R>& into, DeviceBuffer<R>&& g) const {
  if (into.empty())
    into = std::move(g);
  else
    add_scaled(into, g.get(), nullptr);
}

template <class R>
void GpuTapeDevice<R>::norm_backward_to(DeviceBuffer<R>& into, const DeviceBuffer<R>& x,
                                        const DeviceBuffer<R>& y, const DeviceBuffer<R>& g,
                                        const DeviceBuffer<double>& rstd, sim::NormAt at) const {
  const bool first = into.empty();
  if (first) into = DeviceBuffer<R>(value_size());
  if (vocab::is_pointwise(shape_.norm)) {
    pointwise_norm_backward(x.get(), g.get(), into.get(), value_size(), pointwise(at), !first);
    return;
  }
  row_norm_backward(y.get(), g.get(), into.get(), rstd.get(), ctx_.S * shape_.tokens, shape_.width,
                    shape_.norm, shape_.cfg.norm_gain, !first);
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::branch_backward(GpuBranch<R>& br, const DeviceBuffer<R>&,
                                                  const DeviceBuffer<R>& g, int k, bool) const {
  return br.backward(g.get(), ctx_.stats->field(k, lf_gradw));
}

template <class R>
const DeviceBuffer<R>& GpuTapeDevice<R>::edge_matrix(sim::Edge e) {
  DeviceBuffer<R>& W = edges_[std::size_t(e)];
  if (!W.empty()) return W;
  const sim::EdgeDims d = sim::edge_dims(shape_.cfg, e);
  const std::size_t n = std::size_t(d.rows) * d.cols;
  W = DeviceBuffer<R>(n * ctx_.S);
  gaussian_fill(W.get(), n, ctx_.S, ctx_.d_samples, ctx_.seed, sim::edge_layer(shape_.cfg, e),
                sim::edge_stream(e), sim::edge_std(shape_, e));
  if (!ctx_.apply) return W;
  DeviceBuffer<R> w0;  // W_0, for a training step's probe
  if (ctx_.probe) {
    w0 = DeviceBuffer<R>(W.size());
    copy_on_device(w0.get(), W.get(), W.size() * sizeof(R));
  }
  ctx_.apply->apply_edge(e, W.get(), d.rows, d.cols);
  if (ctx_.probe) ctx_.probe->stepped(-1, int(e), w0.get(), W.get(), d.rows, d.cols);
  return W;
}

template <class R>
DeviceBuffer<R> GpuTapeDevice<R>::project(const DeviceBuffer<R>& a, sim::Edge e) {
  const sim::EdgeDims d = sim::edge_dims(shape_.cfg, e);
  const int T = shape_.tokens;
  DeviceBuffer<R> z(std::size_t(ctx_.S) * T * d.cols);
  gemm<R>(ctx_.blas, false, false, T, d.cols, d.rows, 1.0, a.get(), d.rows, (long long)T * d.rows,
          edge_matrix(e).get(), d.cols, (long long)d.rows * d.cols, 0.0, z.get(), d.cols,
          (long long)T * d.cols, ctx_.S);
  if (ctx_.probe) ctx_.probe->input(-1, int(e), a.get());
  return z;
}

template <class R>
void GpuTapeDevice<R>::project_backward_to(DeviceBuffer<R>& into, const DeviceBuffer<R>& a,
                                           const DeviceBuffer<R>& g, sim::Edge e, bool a_grad) {
  const sim::EdgeDims d = sim::edge_dims(shape_.cfg, e);
  const int T = shape_.tokens;
  if (a_grad) {
    const bool first = into.empty();
    if (first) into = DeviceBuffer<R>(std::size_t(ctx_.S) * T * d.rows);
    gemm<R>(ctx_.blas, false, true, T, d.rows, d.cols, 1.0, g.get(), d.cols, (long long)T * d.cols,
            edge_matrix(e).get(), d.cols, (long long)d.rows * d.cols, first ? 0.0 : 1.0, into.get(), d.rows,
            (long long)T * d.rows, ctx_.S);
  }
  if (ctx_.record) ctx_.record->record_edge(e, a.get(), g.get(), d.rows, d.cols);
}

template class GpuTapeDevice<float>;
template class GpuTapeDevice<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu

template class normsim::sim::Tape<normsim::gpu::GpuTapeDevice<float>>;
template class normsim::sim::Tape<normsim::gpu::GpuTapeDevice<double>>;
