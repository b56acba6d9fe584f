#include "gpu/cuda_backend.hpp"

#include "sim/unit_plan.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "gpu/blas.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/gpu_graph.hpp"
#include "gpu/kernels.hpp"
#include "gpu/memory_plan.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack_build.hpp"
#include "sim/unit_plan.hpp"
#include "vocab/names.hpp"

namespace normsim::gpu {

namespace {
// The second forward pass with updated weights (metric output_change) exists on the CPU backend only.
std::string update_refusal(const sim::Config& config) {
  if (config.update == vocab::Update::none) return "";
  return "key 'update': '" + std::string(vocab::name(config.update)) +
         "' (metric output_change) runs on the CPU backend only; use --backend cpu, or update = \"none\"";
}

}  // namespace

CudaOptions CudaBackend::options_from_environment() {
  CudaOptions o;
  if (const char* r = std::getenv("NORMSIM_CUDA_RECOMPUTE")) o.recompute = r;
  return o;
}

CudaBackend::CudaBackend(int threads, CudaOptions options)
    : threads_(threads > 0 ? threads : omp_get_num_procs()), options_(std::move(options)) {
  const std::string& r = options_.recompute;
  if (!r.empty() && r != "auto" && r != "true" && r != "false")
    throw std::invalid_argument("CUDA backend: recompute must be auto, true, false or empty, not '" +
                                options_.recompute + "'");
  std::string why;
  if (!cuda_device_usable(&why)) throw sim::BackendUnavailable(why);
  keep_pool_memory();
}

std::vector<sim::SampleRecord> CudaBackend::run(const sim::Config& config, std::span<const int> samples) {
  if (const std::string why = update_refusal(config); !why.empty()) throw sim::BackendUnavailable(why);
  const std::string& p = config.precision;
  if (p == "float64") return run_typed<double>(config, samples, false);
  if (p == "float32") return run_typed<float>(config, samples, false);
  if (p == "tf32") return run_typed<float>(config, samples, true);
  throw std::invalid_argument("CUDA backend: precision '" + p +
                              "' is not implemented (float32, float64, tf32; bf16 and fp16 are not yet)");
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::string CudaBackend::refusal(const sim::Config& config, int) const {
  if (const std::string why = update_refusal(config); !why.empty()) return why;
  const std::string& p = config.precision;
  if (p != "float32" && p != "float64" && p != "tf32")
    return "key 'precision': '" + p + "' is not float32, float64 or tf32";
  const double budget = options_.memory_fraction * double(plannable_device_bytes());
  const std::string& mode = options_.recompute.empty() ? config.recompute : options_.recompute;
  const MemoryPlan plan = plan_memory(sim::StackShape(config), p == "float64" ? 8 : 4, mode, budget, 1);
  if (plan.per_sample_bytes() <= budget) return "";
  return "keys 'width', 'depth', 'tokens', 'mlp_ratio': one sample needs " +
         sim::human_bytes(plan.per_sample_bytes()) + " on the GPU (activations " +
         sim::human_bytes(plan.activation_bytes) + ", weights " + sim::human_bytes(plan.weight_bytes) +
         (plan.recompute ? " redrawn in the backward" : " kept") + "); this GPU allows " +
         sim::human_bytes(budget) + " (docs/gpu.md: a smaller width, depth or tokens)";
}

template <class R>
std::vector<sim::SampleRecord> CudaBackend::run_typed(const sim::Config& config, std::span<const int> samples,
                                                      bool tf32) {
  const sim::StackShape shape(config);
  const std::shared_ptr<const sim::Placement> owned = sim::placement_for(config);
  const sim::Placement& placement = *owned;
  const int n = int(samples.size()), T = shape.tokens, d = shape.width, K = shape.depth;
  std::vector<sim::SampleRecord> records(n);
  if (n == 0) return records;
  info_ = CudaRunInfo{};
  reset_device_peak();

  // Plan: recompute or keep weights, and how many samples per batch fit the budget. The budget is a share
  // of the memory this process could use now (free plus what the pool holds unused), the same figure on
  // every call however much the pool kept from the last one.
  const double budget = options_.memory_fraction * double(plannable_device_bytes());
  // The backend's options, when they say (constructor or NORMSIM_CUDA_RECOMPUTE), win over the config.
  const std::string& mode = options_.recompute.empty() ? config.recompute : options_.recompute;
  const MemoryPlan plan = plan_memory(shape, sizeof(R), mode, budget, n);
  const bool recompute = plan.recompute;
  const int batch = plan.batch_samples;
  info_.recompute = recompute;
  info_.batch_samples = batch;
  info_.budget_bytes = budget;

  Blas blas(tf32);
  const std::size_t per = std::size_t(T) * d;
  for (int first = 0; first < n; first += batch) {
    const int S = std::min(batch, n - first);
    ++info_.batches;
    const auto t0 = Clock::now();
    std::vector<std::uint32_t> ids(S);
    for (int s = 0; s < S; ++s) ids[s] = std::uint32_t(samples[first + s]);
    const DeviceBuffer<std::uint32_t> d_ids = DeviceBuffer<std::uint32_t>::from_host(ids);
    DeviceBuffer<R> scratch;
    if (recompute) scratch = DeviceBuffer<R>(std::size_t(S) * largest_weight(shape));
    const GpuContext<R> ctx{blas.handle(), config.seed, S, d_ids.get(), recompute, &scratch};

    DeviceBuffer<R> x0(S * per);
    input_fill(x0.get(), S, d_ids.get(), T, d, config.seed, config.input_std, config.input_corr);
    GpuGraph<R> graph(shape, placement, ctx);
    const sim::StackValues sv = sim::build_stack(graph, shape, placement, graph.input(std::move(x0)));

    std::vector<std::vector<R>> hs(K + 1), hg(K + 1);
    for (int l = 0; l <= K; ++l) {
      hs[l].resize(S * per);
      copy_to_host(hs[l].data(), graph.value(sv.stream[l]), S * per * sizeof(R));
    }
    std::vector<R> hy(S * per);
    copy_to_host(hy.data(), graph.value(sv.output), S * per * sizeof(R));
    DeviceBuffer<R> dy(S * per);
    loss_gradient(graph.value(sv.output), dy.get(), S, d_ids.get(), T, d, config.seed,
                  config.loss == vocab::Loss::mse);
    graph.release_forward({});
    graph.backward(sv.output, std::move(dy), sv.stream, [&](int l, const R* d_g) {
      hg[l].resize(S * per);
      copy_to_host(hg[l].data(), d_g, S * per * sizeof(R));
    });
    NORMSIM_CUDA_CHECK(cudaDeviceSynchronize());
    info_.device_seconds += seconds_since(t0);

    const auto t1 = Clock::now();
    std::exception_ptr error;
    std::mutex error_mutex;
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::min(threads_, S))
    for (int s = 0; s < S; ++s) {
      try {
        using MapR = Eigen::Map<const sim::Mat<R>>;
        sim::SampleTensors t;
        bool forward_ok = true;
        for (int l = 0; l <= K; ++l) {
          t.stream.push_back(MapR(hs[l].data() + s * per, T, d).template cast<double>());
          forward_ok = forward_ok && t.stream.back().allFinite();
        }
        t.output_finite = MapR(hy.data() + s * per, T, d).allFinite();
        forward_ok = forward_ok && t.output_finite;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        sim::WeightGradNorms none;
        none.fill(nan);
        for (int k = 0; k < K; ++k) {
          t.branch_sq.push_back(graph.branch_sq[k][s]);
          t.gradw.push_back(forward_ok ? graph.gradw[k][s] : none);
        }
        if (forward_ok)
          for (int l = 0; l <= K; ++l)
            t.grad.push_back(MapR(hg[l].data() + s * per, T, d).template cast<double>());
        records[first + s] = sim::measure_sample(samples[first + s], t, shape);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    info_.metrics_seconds += seconds_since(t1);
  }
  peak_ = std::max(peak_, device_bytes_peak());
  return records;
}

template std::vector<sim::SampleRecord> CudaBackend::run_typed<float>(const sim::Config&,
                                                                      std::span<const int>, bool);
template std::vector<sim::SampleRecord> CudaBackend::run_typed<double>(const sim::Config&,
                                                                       std::span<const int>, bool);

}  // namespace normsim::gpu
