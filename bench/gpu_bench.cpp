// GPU benchmark: W1 and W2 (bench/workloads.hpp), float32, W2bf16 (W2's MLP sublayers in bf16, against
// cuBLAS's bf16 GEMM at the same shape) and W2tf32 (W2 in tf32). Reports GFLOP/s of the device work, the
// fraction of cuBLAS's own SGEMM rate (and its TF32 rate) at the workload's MLP product shape on random
// matrices, measured in the same run, and the ratio to PyTorch doing the same work (bench/gpu_torch.py),
// when torch is available. The warm-up and the timed runs must share one memory plan (checked). Usage:
//   normsim_gpu_bench [WORKLOAD...|all|quick] [--no-torch] [--tune NAME=VALUE]... [--variants]
// WORKLOAD: w1, w2, w2bf16, w2tf32; all (the default): every one; quick: w1, w2bf16 and w2tf32, the three
// that issue 29's speed targets are judged on, in about a minute on an H200. --tune sets one field of
// gpu/tuning.hpp for every run; --variants times each workload under each variant of gpu/tuning.hpp and
// under all of them, rounds interleaved, against the defaults (docs/gpu.md "Variants under measurement").
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/workloads.hpp"
#include "gpu/blas.hpp"
#include "gpu/cuda_backend.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/ops.hpp"
#include "gpu/tuning.hpp"
#include "sim/metric_set.hpp"

namespace {

using normsim::bench::Workload;
using normsim::gpu::DeviceBuffer;

// The product cuBLAS is timed on: float32 (SGEMM), TF32 tensor cores, or bf16 operands with float32
// accumulation (cublasGemmStridedBatchedEx, CUDA_R_16BF, CUBLAS_COMPUTE_32F: what precision = "bf16" calls).
enum class Math { sgemm, tf32, bf16 };

// cuBLAS rate (FLOP/s) at the workload's MLP product: S samples of (T x d)(d x r d), strided-batched, on
// Gaussian matrices (zeros would let the hardware skip work and overstate the rate).
double gemm_rate(const normsim::sim::Config& c, Math math) {
  const int S = c.samples, T = c.tokens, d = c.width, H = int(c.mlp_ratio * d);
  DeviceBuffer<float> a(std::size_t(S) * T * d), b(std::size_t(S) * d * H), out(std::size_t(S) * T * H);
  const auto ids = DeviceBuffer<std::uint32_t>::from_host({0});
  normsim::gpu::gaussian_fill(a.get(), a.size(), 1, ids.get(), 1, 0, normsim::sim::Stream::w1, 1.0);
  normsim::gpu::gaussian_fill(b.get(), b.size(), 1, ids.get(), 1, 0, normsim::sim::Stream::w2, 1.0);
  DeviceBuffer<std::uint16_t> a16(math == Math::bf16 ? a.size() : 0), b16(math == Math::bf16 ? b.size() : 0);
  if (math == Math::bf16) {
    normsim::gpu::round_to_bf16(a.get(), nullptr, a16.get(), a.size());
    normsim::gpu::round_to_bf16(b.get(), nullptr, b16.get(), b.size());
  }
  normsim::gpu::Blas blas(math == Math::tf32);
  auto once = [&] {
    if (math == Math::bf16)
      normsim::gpu::gemm_bf16(blas.handle(), false, false, T, H, d, 1.0, a16.get(), d, (long long)T * d,
                              b16.get(), H, (long long)d * H, 0.0, out.get(), H, (long long)T * H, S);
    else
      normsim::gpu::cublas_gemm<float>(blas.handle(), false, false, T, H, d, 1.0, a.get(), d,
                                       (long long)T * d, b.get(), H, (long long)d * H, 0.0, out.get(), H,
                                       (long long)T * H, S);
  };
  once();
  cudaEvent_t e0, e1;
  NORMSIM_CUDA_CHECK(cudaEventCreate(&e0));
  NORMSIM_CUDA_CHECK(cudaEventCreate(&e1));
  const int reps = 20;
  NORMSIM_CUDA_CHECK(cudaEventRecord(e0));
  for (int i = 0; i < reps; ++i) once();
  NORMSIM_CUDA_CHECK(cudaEventRecord(e1));
  NORMSIM_CUDA_CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  NORMSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return 2.0 * S * T * double(d) * H * reps / (ms * 1e-3);
}

// PyTorch eager on the same device and workload (its parameters passed on, one definition).
double torch_seconds(const normsim::sim::Config& c) {
  const std::string cmd = "python3 " NORMSIM_SOURCE_DIR "/bench/gpu_torch.py --sublayer " +
                          std::string(normsim::vocab::name(c.sublayer)) + " --activation " +
                          std::string(normsim::vocab::name(c.activation)) + " --width " +
                          std::to_string(c.width) + " --depth " + std::to_string(c.depth) + " --tokens " +
                          std::to_string(c.tokens) + " --samples " + std::to_string(c.samples) + " --ratio " +
                          std::to_string(c.mlp_ratio) + " --heads " + std::to_string(c.heads) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char line[512];
  double s = -1;
  while (fgets(line, sizeof line, p)) {
    if (std::sscanf(line, "torch_seconds %lf", &s) != 1) std::fputs(line, stdout);
  }
  pclose(p);
  return s;
}

bool same_plan(const normsim::gpu::CudaRunInfo& a, const normsim::gpu::CudaRunInfo& b) {
  return a.batches == b.batches && a.batch_samples == b.batch_samples && a.recompute == b.recompute;
}

// The statistics bench/gpu_torch.py computes too, so that the ratio compares the same work; a run with every
// metric (eff_rank's Gram and eigensolver, the cosines) is timed beside it.
normsim::sim::MetricSet torch_metrics() {
  return normsim::sim::MetricSet::of({"act_sq", "grad_sq", "branch_sq", "gradw_w1", "gradw_w2", "gradw_wgate",
                                      "gradw_wq", "gradw_wk", "gradw_wv", "gradw_wo"});
}

void bench_workload(const Workload& workload, bool torch) {
  normsim::gpu::CudaBackend backend(0);
  Workload w = workload;
  std::vector<int> samples(w.config.samples);
  std::iota(samples.begin(), samples.end(), 0);
  w.config.metrics = torch_metrics();
  backend.run(w.config, samples);  // warm-up: pool, cuBLAS heuristics
  const normsim::gpu::CudaRunInfo warm = backend.last_run();
  double best_dev = 1e300, best_total = 0, metrics = 0;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    backend.run(w.config, samples);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!same_plan(warm, backend.last_run()))
      throw std::runtime_error(w.name + ": the timed run's memory plan differs from the warm-up's");
    if (backend.last_run().device_seconds < best_dev) {
      best_dev = backend.last_run().device_seconds;
      best_total = total;
      metrics = backend.last_run().metrics_seconds;
    }
  }
  normsim::sim::Config every = w.config;
  every.metrics = workload.config.metrics;
  backend.run(every, samples);
  const double all_metrics = backend.last_run().device_seconds;
  const double rate = w.flops / best_dev, sgemm = gemm_rate(w.config, Math::sgemm),
               tf32 = gemm_rate(w.config, Math::tf32);
  const auto& c = w.config;
  std::printf(
      "%s: %.3f GFLOP nominal; device %.4f s = %.1f GFLOP/s = %.1f%% of cuBLAS SGEMM (%.1f GFLOP/s), %.1f%% "
      "of "
      "TF32 (%.1f GFLOP/s) at %d x (%d x %d)(%d x %d); wall %.3f s (records on the host %.3f s); batches %d "
      "x %d samples, recompute %s, peak device memory %.2f GiB\n",
      w.name.c_str(), w.flops / 1e9, best_dev, rate / 1e9, 100 * rate / sgemm, sgemm / 1e9, 100 * rate / tf32,
      tf32 / 1e9, c.samples, c.tokens, c.width, c.width, int(c.mlp_ratio * c.width), best_total, metrics,
      warm.batches, warm.batch_samples, warm.recompute ? "yes" : "no",
      backend.peak_memory_bytes() / 1073741824.0);
  std::printf(
      "%s: the same with every metric (eff_rank, cosines, ...): device %.4f s (one run, after the timed "
      "ones)\n",
      w.name.c_str(), all_metrics);
  if (c.precision == normsim::vocab::Precision::bf16) {
    const double bf16 = gemm_rate(c, Math::bf16);
    std::printf(
        "%s: %.1f%% of cuBLAS BF16 (bf16 operands, float32 accumulation: %.1f GFLOP/s) at that shape\n",
        w.name.c_str(), 100 * rate / bf16, bf16 / 1e9);
  }
  if (c.precision == normsim::vocab::Precision::tf32)
    std::printf("%s: %.1f%% of cuBLAS TF32 (%.1f GFLOP/s) at that shape\n", w.name.c_str(), 100 * rate / tf32,
                tf32 / 1e9);
  if (torch && c.precision == normsim::vocab::Precision::float32) {  // bench/gpu_torch.py runs float32
    const double ts = torch_seconds(c);
    if (ts > 0)
      std::printf("%s: torch %.4f s; normsim device time / torch time = %.3f (torch / normsim = %.2fx)\n",
                  w.name.c_str(), ts, best_dev / ts, ts / best_dev);
    else
      std::printf("%s: torch unavailable (python3 with CUDA torch needed)\n", w.name.c_str());
  }
  std::fflush(stdout);
}

// The variants of gpu/tuning.hpp one at a time, then together, each against the defaults.
std::vector<std::pair<std::string, normsim::gpu::Tuning>> tuning_variants() {
  using normsim::gpu::Tuning;
  const Tuning base = normsim::gpu::tuning();
  std::vector<std::pair<std::string, Tuning>> v = {{"defaults", base}};
  Tuning t = base;
  t.vector_fill = true;
  v.emplace_back("vector_fill", t);
  t = base;
  t.fused_scales = true;
  v.emplace_back("fused_scales", t);
  t = base;
  t.spread_dot = true;
  v.emplace_back("spread_dot", t);
  t = base;
  t.slice_max_tiles = 128, t.slice_min_k = 512, t.slice_target_tiles = 1024;
  v.emplace_back("slices_k512", t);
  t.vector_fill = t.fused_scales = t.spread_dot = true;
  v.emplace_back("all", t);
  return v;
}

// The workload's timed run (its torch metrics) under each variant, 5 rounds with the variants in turn
// within each round (a drift of the card's clocks then falls on every variant alike), best device time of
// each; the defaults are put back after.
void bench_variants(const Workload& workload) {
  normsim::gpu::CudaBackend backend(0);
  Workload w = workload;
  std::vector<int> samples(w.config.samples);
  std::iota(samples.begin(), samples.end(), 0);
  w.config.metrics = torch_metrics();
  const auto variants = tuning_variants();
  std::vector<double> best(variants.size(), 1e300);
  for (int r = -1; r < 5; ++r) {  // round -1: each variant's warm-up (its kernels' first launch, cuBLAS's)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      normsim::gpu::tuning() = variants[v].second;
      backend.run(w.config, samples);
      if (r >= 0) best[v] = std::min(best[v], backend.last_run().device_seconds);
    }
  }
  normsim::gpu::tuning() = variants[0].second;
  const double sgemm = gemm_rate(w.config, Math::sgemm);
  for (std::size_t v = 0; v < variants.size(); ++v)
    std::printf("%s variant %-13s device %.4f s = %.1f%% of the defaults' time, %.1f%% of cuBLAS SGEMM\n",
                w.name.c_str(), variants[v].first.c_str(), best[v], 100 * best[v] / best[0],
                100 * w.flops / best[v] / sgemm);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> every = {"w1", "w2", "w2bf16", "w2tf32"}, quick = {"w1", "w2bf16", "w2tf32"};
  std::vector<std::string> which;
  bool torch = true, variants = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-torch") {
      torch = false;
    } else if (a == "--variants") {
      variants = true;
    } else if (a == "--tune" && i + 1 < argc) {
      try {
        normsim::gpu::set_tuning(normsim::gpu::tuning(), argv[++i]);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "normsim_gpu_bench: %s\n", e.what());
        return 2;
      }
    } else if (const auto& set = a == "all" ? every : quick; a == "all" || a == "quick")
      which.insert(which.end(), set.begin(), set.end());
    else
      which.push_back(a);
  }
  if (which.empty()) which = every;
  try {  // an unknown name stops the run before any device work
    for (const std::string& name : which) normsim::bench::benchmark_workload(name);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "normsim_gpu_bench: %s\n", e.what());
    return 2;
  }
  std::string why;
  if (!normsim::gpu::cuda_device_usable(&why)) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", std::localtime(&now));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("normsim GPU benchmark  device: %s  driver %d  runtime %d  date: %s\n",
              normsim::gpu::cuda_device_name().c_str(), driver, runtime, date);
  for (const std::string& name : which) {
    if (variants)
      bench_variants(normsim::bench::benchmark_workload(name));
    else
      bench_workload(normsim::bench::benchmark_workload(name), torch);
  }
  return 0;
}
