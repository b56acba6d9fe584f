#include "gpu/device_stats.hpp"

#include "gpu/cuda_check.hpp"
#include "sim/metrics.hpp"
#include "sim/weight_update.hpp"

namespace normsim::gpu {

DeviceStats::DeviceStats(int depth, int S)
    : depth_(depth), S_(S), d_(std::size_t(depth + 2) * kLayerFields * S) {
  NORMSIM_CUDA_CHECK(cudaMemset(d_.get(), 0xFF, d_.size() * sizeof(double)));  // all bits set: a NaN
  void* p = nullptr;
  NORMSIM_CUDA_CHECK(cudaMallocHost(&p, d_.size() * sizeof(double)));
  h_ = static_cast<double*>(p);
}

DeviceStats::~DeviceStats() {
  if (h_) cudaFreeHost(h_);
}

void DeviceStats::copy_to_host() {
  NORMSIM_CUDA_CHECK(
      cudaMemcpyAsync(h_, d_.get(), d_.size() * sizeof(double), cudaMemcpyDeviceToHost, cudaStreamLegacy));
  NORMSIM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

sim::SampleScalars DeviceStats::scalars(int s, const sim::StackShape& shape) const {
  namespace m = sim::metric;
  const int K = depth_;
  sim::SampleScalars r = sim::empty_scalars(K);
  const double size = double(shape.tokens) * shape.width;
  for (int l = 0; l <= K; ++l) {
    r.values[m::act_sq][l] = host(l, lf_stream + f_act_sq, s);
    r.values[m::act_mean_abs][l] = host(l, lf_stream + f_mean_abs, s);
    r.values[m::act_max_abs][l] = host(l, lf_stream + f_max_abs, s);
    r.values[m::token_cos][l] = host(l, lf_stream + f_token_cos, s);
    r.values[m::eff_rank][l] = host(l, lf_eff_rank, s);
    r.values[m::grad_sq][l] = host(l, lf_grad + f_act_sq, s);
    r.stream_finite[l] = host(l, lf_stream + f_nonfinite, s) == 0;
    r.grad_finite[l] = host(l, lf_grad + f_nonfinite, s) == 0;
    r.values[m::output_change][l] = host(l, lf_change, s) / host(l, lf_change_ref, s);
  }
  // As the CPU backend: a step from a non-finite gradient is not an update.
  bool grads_finite = true;
  for (const bool f : r.grad_finite) grads_finite = grads_finite && f;
  r.updated =
      shape.cfg.update != vocab::Update::none && (grads_finite || !sim::steps_on_loss(shape.cfg.update));
  r.output_finite = host(output_block(), lf_stream + f_nonfinite, s) == 0;
  for (int k = 0; k < K; ++k) {
    r.values[m::cos_next][k] = host(k, lf_stream + f_cos_next, s);
    r.values[m::rel_update][k] = host(k, lf_stream + f_rel_update, s);
    r.values[m::branch_sq][k] = host(k, lf_branch_sum, s) / size;  // as sim::mean_square
    for (int w = 0; w < sim::kWeightKinds; ++w)
      if (const int m = sim::gradw_metric(sim::WeightKind(w)); m >= 0)
        r.values[m][k] = host(k, lf_gradw + w, s);
  }
  return r;
}

}  // namespace normsim::gpu
