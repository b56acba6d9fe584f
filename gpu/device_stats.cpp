#include "gpu/device_stats.hpp"

#include "gpu/cuda_check.hpp"
#include "sim/edges.hpp"
#include "sim/metrics.hpp"
#include "sim/single_update.hpp"
#include "sim/statistic_finish.hpp"
#include "sim/stream_fields.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

DeviceStats::DeviceStats(int depth, int S, int lanes)
    : depth_(depth),
      S_(S),
      lanes_(lanes),
      blocks_(depth + 2 + (lanes > 1 ? (depth + 1) * lanes : 0)),
      pairs_(lanes * (lanes - 1) / 2),
      d_(doubles_per_sample(depth, lanes) * std::size_t(S)) {
  NORMSIM_CUDA_CHECK(cudaMemset(d_.get(), 0xFF, d_.size() * sizeof(double)));  // all bits set: a NaN
  void* p = nullptr;
  NORMSIM_CUDA_CHECK(cudaMallocHost(&p, d_.size() * sizeof(double)));
  h_ = static_cast<double*>(p);
}

std::size_t DeviceStats::doubles_per_sample(int depth, int lanes) {
  const std::size_t blocks = std::size_t(depth + 2) + (lanes > 1 ? std::size_t(depth + 1) * lanes : 0);
  const std::size_t pairs = std::size_t(lanes) * std::size_t(lanes - 1) / 2;
  return blocks * kLayerFields + std::size_t(depth + 1) * pairs * kStreamFields;
}

DeviceStats::~DeviceStats() {
  if (h_) cudaFreeHost(h_);
}

void DeviceStats::copy_to_host() {
  NORMSIM_CUDA_CHECK(
      cudaMemcpyAsync(h_, d_.get(), d_.size() * sizeof(double), cudaMemcpyDeviceToHost, cudaStreamLegacy));
  NORMSIM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

void DeviceStats::stream_values(int block, int l, int s, std::vector<std::vector<double>>& values) const {
  namespace m = sim::metric;
  for (const sim::StreamFieldInfo& f : sim::kStreamFieldTable)
    if (f.metric >= 0 && (!f.pair || l < depth_)) values[f.metric][l] = host(block, lf_stream + f.field, s);
  values[m::eff_rank][l] = host(block, lf_eff_rank, s);
  values[m::grad_sq][l] = host(block, lf_grad + f_act_sq, s);
}

// Every lane's values, and lane_cos from the pairs' cos_next fields (sim/statistic_finish.hpp, as the CPU).
void DeviceStats::lane_values(int s, sim::SampleScalars& r) const {
  for (int l = 0; l <= depth_ && lanes_ > 1; ++l) {
    for (int i = 0; i < lanes_; ++i) stream_values(lane_block(l, i), l, s, r.lanes[std::size_t(i)]);
    r.values[sim::metric::lane_cos][l] = sim::lane_cosine_of_pairs(
        lanes_, [&](int, int, int p) { return h_[pair_offset(l, p) + std::size_t(f_cos_next) * S_ + s]; });
  }
}

sim::SampleScalars DeviceStats::scalars(int s, const sim::StackShape& shape) const {
  namespace m = sim::metric;
  const int K = depth_;
  sim::SampleScalars r = sim::empty_scalars(K, lanes_);
  const double size = double(shape.tokens) * shape.width;
  lane_values(s, r);
  for (int l = 0; l <= K; ++l) {
    stream_values(l, l, s, r.values);
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
  // The logits' means, NaN unless a training step measured them (stored from train_step 0 on).
  const double logits =
      double(shape.tokens) * (sim::has_readout(shape.cfg) ? shape.cfg.output_width : shape.width);
  r.values[m::logit_mean_abs][K] = host(output_block(), lf_logit_abs, s) / logits;
  r.values[m::logit_change][K] = host(output_block(), lf_logit_change, s) / logits;
  for (int k = 0; k < K; ++k) {
    r.values[m::branch_sq][k] = host(k, lf_branch_sum, s) / size;  // as sim::mean_square
    for (int w = 0; w < sim::kWeightKinds; ++w)
      if (const int m = sim::gradw_metric(sim::WeightKind(w)); m >= 0)
        r.values[m][k] = host(k, lf_gradw + w, s);
  }
  return r;
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
