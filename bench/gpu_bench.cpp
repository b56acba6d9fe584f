// GPU benchmark: W1 (Pre-LN MLP, GELU, depth 64, width 512, ratio 4, 64 tokens, 4 samples) and W2 (Pre-LN
// transformer, width 4096, depth 96, 512 tokens, 8 samples, 32 heads), float32. Reports GFLOP/s of the
// device work, the fraction of cuBLAS's own SGEMM rate at the workload's MLP product shape measured in the
// same run, and the ratio to PyTorch doing the same work (bench/gpu_torch.py), when torch is available.
// Nominal FLOPs (forward + backward = 3 x forward): MLP sublayer 48 T d^2 (ratio 4); attention sublayer
// 24 T d^2 (four d x d projections) + 12 T^2 d (scores and mixing, non-causal). Usage:
//   normsim_gpu_bench [w1|w2|all] [--no-torch]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <string>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/cuda_backend.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"

namespace {

using normsim::gpu::DeviceBuffer;

struct Workload {
  std::string name;
  normsim::sim::Config config;
  double flops;
};

Workload make(const std::string& name) {
  normsim::sim::Config c;
  c.placement = normsim::vocab::Placement::pre;
  c.precision = "float32";
  c.mlp_ratio = 4;
  c.activation = normsim::vocab::Activation::gelu;
  double T, d, L, S;
  if (name == "w1") {
    c.sublayer = normsim::vocab::Sublayer::mlp, c.depth = 64, c.width = 512, c.tokens = 64, c.samples = 4;
  } else {
    c.sublayer = normsim::vocab::Sublayer::transformer, c.depth = 96, c.width = 4096, c.tokens = 512,
    c.samples = 8, c.heads = 32;
  }
  T = c.tokens, d = c.width, L = c.depth, S = c.samples;
  const double mlp = 48 * T * d * d, attn = 24 * T * d * d + 12 * T * T * d;
  const double per = c.sublayer == normsim::vocab::Sublayer::mlp ? L * mlp : L / 2 * (mlp + attn);
  return {name, c, S * per};
}

// cuBLAS SGEMM rate (FLOP/s) at the workload's MLP product: S samples of (T x d)(d x 4d), strided-batched.
double sgemm_rate(const normsim::sim::Config& c) {
  const int S = c.samples, T = c.tokens, d = c.width, H = 4 * d;
  DeviceBuffer<float> a(std::size_t(S) * T * d), b(std::size_t(S) * d * H), out(std::size_t(S) * T * H);
  a.zero(), b.zero();
  normsim::gpu::Blas blas;
  auto once = [&] {
    normsim::gpu::gemm<float>(blas.handle(), false, false, T, H, d, 1.0, a.get(), d, (long long)T * d,
                              b.get(), H, (long long)d * H, 0.0, out.get(), H, (long long)T * H, S);
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

double torch_seconds(const std::string& workload) {
  const std::string cmd =
      "python3 " NORMSIM_SOURCE_DIR "/bench/gpu_torch.py --workload " + workload + " 2>&1";
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

}  // namespace

int main(int argc, char** argv) {
  std::string which = "all";
  bool torch = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-torch")
      torch = false;
    else
      which = a;
  }
  std::string why;
  if (normsim::gpu::cuda_device_count(&why) == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n", why.c_str());
    return 77;
  }
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", std::localtime(&now));
  std::printf("normsim GPU benchmark  device: %s  date: %s\n", normsim::gpu::cuda_device_name().c_str(),
              date);
  for (const std::string name : {"w1", "w2"}) {
    if (which != "all" && which != name) continue;
    const Workload w = make(name);
    normsim::gpu::CudaBackend backend(0);
    std::vector<int> samples(w.config.samples);
    std::iota(samples.begin(), samples.end(), 0);
    backend.run(w.config, samples);  // warm-up: pool, cuBLAS heuristics
    double best_dev = 1e300, best_total = 0, metrics = 0;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      backend.run(w.config, samples);
      const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (backend.last_run().device_seconds < best_dev) {
        best_dev = backend.last_run().device_seconds;
        best_total = total;
        metrics = backend.last_run().metrics_seconds;
      }
    }
    const double rate = w.flops / best_dev, peak = sgemm_rate(w.config);
    std::printf(
        "%s: %.3f GFLOP nominal; device %.4f s = %.1f GFLOP/s = %.1f%% of cuBLAS SGEMM (%.1f GFLOP/s at "
        "%d x (%d x %d)(%d x %d)); with host metrics %.3f s (metrics %.3f s); batches %d x %d samples, "
        "recompute %s, peak device memory %.2f GiB\n",
        name.c_str(), w.flops / 1e9, best_dev, rate / 1e9, 100 * rate / peak, peak / 1e9, w.config.samples,
        w.config.tokens, w.config.width, w.config.width, 4 * w.config.width, best_total, metrics,
        backend.last_run().batches, backend.last_run().batch_samples,
        backend.last_run().recompute ? "yes" : "no", backend.peak_memory_bytes() / 1073741824.0);
    if (torch) {
      const double ts = torch_seconds(name);
      if (ts > 0)
        std::printf("%s: torch %.4f s; normsim device time / torch time = %.3f (torch / normsim = %.2fx)\n",
                    name.c_str(), ts, best_dev / ts, ts / best_dev);
      else
        std::printf("%s: torch unavailable (python3 with CUDA torch needed)\n", name.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
