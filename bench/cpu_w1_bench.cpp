// Benchmark W1 (issue "Core simulator"): Pre-LN, MLP with GELU, depth 64, width 512, mlp_ratio 4,
// tokens 64, samples 4, float32, forward and backward with every metric, on the CPU backend.
// Reports, measured in this one run: normsim's GFLOP/s (nominal count 48 S T d^2 L: forward 16, backward
// 32 per layer), this machine's single-precision GEMM rate through Eigen with the same threads, and the
// time PyTorch takes for the same work (bench/w1_torch.py: weights drawn, forward, backward, statistics).
// Usage: normsim_cpu_w1_bench [--threads N] [--no-torch] [--python PATH] [--repeat R]
#include <omp.h>

#include <Eigen/Dense>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "sim/cpu_backend.hpp"

using normsim::sim::Config;
using normsim::sim::CpuBackend;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Single-precision GEMM rate of Eigen on this machine with `threads` independent GEMMs in flight (how the
// CPU backend uses it: one sample per thread), at the W1 shape (64 x 512) x (512 x 2048) and at a square
// 1024 shape; the best of the two is reported as the machine's rate.
double eigen_sgemm_gflops(int threads) {
  double best = 0;
  for (const auto& [m, k, n] : {std::tuple{64, 512, 2048}, std::tuple{1024, 1024, 1024}}) {
    const int reps = int(2e10 / (2.0 * m * k * n)) + 1;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const M a = M::Random(m, k), b = M::Random(k, n);
      M c(m, n);
      for (int r = 0; r < reps; ++r) c.noalias() = a * b;
      volatile float sink = c(0, 0);
      (void)sink;
    }
    best = std::max(best, threads * reps * 2.0 * m * k * n / seconds_since(t0) / 1e9);
  }
  return best;
}

double run_torch(const std::string& python, int threads) {
  const std::string cmd = python + " " + NORMSIM_SOURCE_DIR + "/bench/w1_torch.py --threads " +
                          std::to_string(threads) + " --repeat 2";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char line[256];
  double secs = -1;
  while (fgets(line, sizeof line, p)) {
    std::fputs(line, stdout);
    std::sscanf(line, "torch_seconds %lf", &secs);
  }
  pclose(p);
  return secs;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = omp_get_num_procs(), repeat = 3;
  bool torch = true;
  std::string python = "/usr/bin/python3";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else if (a == "--no-torch")
      torch = false;
    else if (a == "--python" && i + 1 < argc)
      python = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--repeat R] [--no-torch] [--python PATH]\n", argv[0]);
      return 2;
    }
  }
  Config c;
  c.placement = normsim::vocab::Placement::pre;
  c.sublayer = normsim::vocab::Sublayer::mlp;
  c.activation = normsim::vocab::Activation::gelu;
  c.depth = 64;
  c.width = 512;
  c.mlp_ratio = 4;
  c.tokens = 64;
  c.samples = 4;
  std::vector<int> samples(c.samples);
  std::iota(samples.begin(), samples.end(), 0);
  CpuBackend backend(threads);
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto records = backend.run(c, samples);
    best = std::min(best, seconds_since(t0));
  }
  const double flops = 48.0 * c.samples * c.tokens * double(c.width) * c.width * c.depth;
  const double gflops = flops / best / 1e9;
  const double peak = eigen_sgemm_gflops(threads);
  std::printf("W1 normsim cpu: %.3f s, %.1f GFLOP/s (nominal 48 S T d^2 L = %.1f GFLOP), threads %d\n", best,
              gflops, flops / 1e9, threads);
  std::printf("Eigen SGEMM rate, %d threads: %.1f GFLOP/s -> normsim at %.0f%% of it\n", threads, peak,
              100 * gflops / peak);
  if (torch) {
    const double t = run_torch(python, threads);
    if (t > 0)
      std::printf("PyTorch same work: %.3f s -> normsim is %.2fx PyTorch\n", t, t / best);
    else
      std::printf("PyTorch: not available (%s with torch)\n", python.c_str());
  }
  return 0;
}
