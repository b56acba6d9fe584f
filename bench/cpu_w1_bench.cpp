// Benchmark W1 (bench/workloads.hpp) on the CPU backend, everything measured in this one run:
//  - normsim W1 (samples 4) with --threads, best of --repeat; its rate on the nominal count (48 S T d^2 L,
//    weight gradients counted as if formed) and on the arithmetic it actually does (actual_flops below);
//    and the first round's time, which pays the first touches of the workspaces' memory as a process that
//    runs W1 once does;
//  - W1 at samples 1 with 1 thread and with every thread: the speed-up of parallelism inside one sample;
//  - the machine's SGEMM peak: the faster of Eigen's SGEMM (best of several shapes) and normsim's own
//    thin_gemm on W1's products, one GEMM per thread, and normsim's actual rate as a fraction of it (and
//    of Eigen's alone, the reference issue 17 was written against);
//  - PyTorch (bench/w1_torch.py) doing the same work, with 1 and with 2 threads, and the lean batched
//    PyTorch that skips what normsim skips, with 1 and 2 threads; each ratio uses PyTorch's fastest setting.
// Usage: normsim_cpu_w1_bench [--threads N] [--repeat R] [--no-torch] [--w1-only] [--python PATH]
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "bench/workloads.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_parallel.hpp"
#include "sim/cpu/gram.hpp"
#include "sim/cpu/thin_gemm.hpp"

using normsim::sim::Config;
using normsim::sim::CpuBackend;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The floating-point operations normsim's CPU backend performs on W1-like MLP stacks, counted as GEMM
// arithmetic (2 per multiply-add): per sublayer the two forward products (2 x 2 T d H), the two backward
// products of the input gradient (2 x 2 T d H), and the four T x T Gram matrices of the weight-gradient
// norms, of rows of length d, H, H and d: thin_gram's dot products (sim/cpu/gram.hpp; 2176 for T = 64),
// all T^2 with Eigen's product in a build without AVX-512; per stream the T x T Gram of eff_rank (2 T^2 d,
// Eigen, double). Elementwise work (norms, activations, statistics) and the weight draws are not counted.
double actual_flops(const Config& c) {
  const double T = c.tokens, d = c.width, H = std::round(c.mlp_ratio * c.width), L = c.depth;
  const double gram_entries =
      normsim::sim::has_thin_gemm ? normsim::sim::thin_gram_dot_products(c.tokens) : T * T;
  return c.samples * (L * (8 * T * d * H + 2 * gram_entries * 2 * (d + H)) + (L + 1) * 2 * T * T * d);
}

// GFLOP/s of `threads` GEMMs in flight at once (one per thread, as the CPU backend runs samples), each
// thread running gemm(a, b, c) `reps` times on its own m x k and k x n operands (b n x k where
// `transposed`, for a product with b^T), made before the clock starts (drawing them inside the timed
// region, as this benchmark once did, took the libc random lock).
template <class Gemm>
double gemm_rate(int threads, int m, int k, int n, bool transposed, Gemm gemm) {
  using M = normsim::sim::Mat<float>;
  const int reps = int(3e10 / (2.0 * m * k * n)) + 1;
  double seconds = 0;
#pragma omp parallel num_threads(threads)
  {
    const M a = M::Random(m, k), b = transposed ? M::Random(n, k) : M::Random(k, n);
    M c(m, n);
    std::chrono::steady_clock::time_point t0;
#pragma omp barrier
#pragma omp master
    t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) gemm(a, b, c);
#pragma omp barrier
#pragma omp master
    seconds = seconds_since(t0);
    volatile float sink = c(0, 0);
    (void)sink;
  }
  return threads * reps * 2.0 * m * k * n / seconds / 1e9;
}

// The best of W1's two product shapes and square 1024 and 2048, each measured twice (the VM runs in a
// fast or a slow mode from moment to moment: the peak is the fast one), for Eigen's SGEMM.
double eigen_sgemm_peak(int threads) {
  double best = 0;
  for (const auto& [m, k, n] :
       {std::tuple{64, 512, 2048}, std::tuple{64, 2048, 512}, std::tuple{1024, 1024, 1024},
        std::tuple{2048, 2048, 2048}, std::tuple{64, 512, 2048}, std::tuple{2048, 2048, 2048}})
    best = std::max(best, gemm_rate(threads, m, k, n, false,
                                    [](const auto& a, const auto& b, auto& c) { c.noalias() = a * b; }));
  return best;
}

// The same for normsim's own float32 GEMM (sim/cpu/thin_gemm.hpp) on W1's products as the backend runs them,
// A W and A W^T, each measured twice.
double thin_gemm_peak(int threads) {
  using normsim::sim::product_by_columns;
  double best = 0;
  for (int twice = 0; twice < 2; ++twice)
    for (const auto& [m, k, n] : {std::tuple{64, 512, 2048}, std::tuple{64, 2048, 512}}) {
      best = std::max(best, gemm_rate(threads, m, k, n, false, [](const auto& a, const auto& b, auto& c) {
                        product_by_columns(c, a, b, false, 1);
                      }));
      best = std::max(best, gemm_rate(threads, m, k, n, true, [](const auto& a, const auto& b, auto& c) {
                        product_by_columns(c, a, b.transpose(), false,
                                           1);  // b is the weight as the backward holds it
                      }));
    }
  return best;
}

// Seconds of one run of `c` on `backend` (its workspaces kept from the runs before, as a long job keeps
// them).
double time_normsim(CpuBackend& backend, const Config& c) {
  std::vector<int> samples(c.samples);
  std::iota(samples.begin(), samples.end(), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const auto records = backend.run(c, samples);
  return seconds_since(t0);
}

// bench/w1_torch.py in `mode` with `threads`; OpenBLAS (Debian's, if installed) behind PyTorch: the OpenMP
// build setup.sh installs (it shares torch's thread pool), else the pthreads one earlier figures used.
double run_torch(const std::string& python, const std::string& mode, int threads) {
  const std::string openmp = "/usr/lib/x86_64-linux-gnu/openblas-openmp";
  const std::string blas =
      std::filesystem::exists(openmp) ? openmp : "/usr/lib/x86_64-linux-gnu/openblas-pthread";
  const std::string env = (std::filesystem::exists(blas) ? "LD_LIBRARY_PATH=" + blas + " " : std::string()) +
                          "OMP_NUM_THREADS=" + std::to_string(threads) +
                          " OPENBLAS_NUM_THREADS=" + std::to_string(threads) + " ";
  const std::string cmd = env + python + " " + NORMSIM_SOURCE_DIR + "/bench/w1_torch.py --mode " + mode +
                          " --threads " + std::to_string(threads) + " --repeat 2";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char line[256];
  double secs = -1;
  while (fgets(line, sizeof line, p)) {
    std::printf("  %s", line);
    std::sscanf(line, "torch_seconds %lf", &secs);
  }
  pclose(p);
  return secs;
}

// PyTorch's fastest setting of `mode` over 1 and 2 threads; prints each.
double best_torch(const std::string& python, const std::string& mode, double normsim_s) {
  double best = 1e300;
  for (const int t : {1, 2}) {
    const double s = run_torch(python, mode, t);
    if (s <= 0) continue;
    std::printf("PyTorch %s, %d thread(s): %.3f s -> normsim %.2fx\n", mode.c_str(), t, s, s / normsim_s);
    best = std::min(best, s);
  }
  return best < 1e300 ? best : -1;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = omp_get_num_procs(), repeat = 3;
  bool torch = true, w1_only = false;
  std::string python = "/usr/bin/python3";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else if (a == "--no-torch")
      torch = false;
    else if (a == "--w1-only")  // for a profiler: W1 alone, no peaks, no PyTorch
      w1_only = true;
    else if (a == "--python" && i + 1 < argc)
      python = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--repeat R] [--no-torch] [--w1-only] [--python PATH]\n",
                   argv[0]);
      return 2;
    }
  }
  const normsim::bench::Workload w1 = normsim::bench::benchmark_workload("w1");
  Config one = w1.config;
  one.samples = 1;
  // Rounds of every measurement in turn, each figure the best over the rounds: the VM runs in a fast or a
  // slow mode from moment to moment, and a ratio of two figures taken minutes apart could compare a fast
  // moment with a slow one (W1 at 66 % of Eigen's peak in one run, 88 % in the next, measured one after the
  // other). The first round's W1 pays the workspaces' first touches.
  CpuBackend backend(threads), single(1);
  double best = 1e300, first = 0, s1 = 1e300, sn = 1e300, eigen = 0, thin = 0;
  for (int r = 0; r < repeat; ++r) {
    const double t = time_normsim(backend, w1.config);
    if (r == 0) first = t;
    best = std::min(best, t);
    if (w1_only) continue;
    s1 = std::min(s1, time_normsim(single, one));
    sn = std::min(sn, time_normsim(backend, one));
    eigen = std::max(eigen, eigen_sgemm_peak(threads));
    thin = std::max(thin, thin_gemm_peak(threads));
  }
  const double actual = actual_flops(w1.config);
  std::printf(
      "W1 normsim cpu, %d threads: %.3f s; nominal %.1f GFLOP -> %.1f GFLOP/s; actual arithmetic %.1f "
      "GFLOP -> %.1f GFLOP/s\n",
      threads, best, w1.flops / 1e9, w1.flops / best / 1e9, actual / 1e9, actual / best / 1e9);
  // What a process that runs W1 once pays besides (issue 31): the first round's first touches.
  std::printf("W1 normsim cpu, first round (the workspaces' first touches): %.3f s = %.2fx the best\n", first,
              first / best);
  if (w1_only) return 0;
  std::printf("W1 samples 1: %.3f s on 1 thread, %.3f s on %d -> speed-up %.2fx\n", s1, sn, threads, s1 / sn);
  const double peak = std::max(eigen, thin);
  std::printf("Eigen SGEMM peak, %d threads: %.1f GFLOP/s -> normsim actual at %.0f%%, nominal at %.0f%%\n",
              threads, eigen, 100 * actual / best / 1e9 / eigen, 100 * w1.flops / best / 1e9 / eigen);
  std::printf("normsim's thin_gemm on W1's products, %d threads: %.1f GFLOP/s\n", threads, thin);
  std::printf("machine's SGEMM peak (the faster of the two): %.1f GFLOP/s -> normsim actual at %.0f%%\n",
              peak, 100 * actual / best / 1e9 / peak);
  if (!torch) return 0;
  const double same = best_torch(python, "same", best), lean = best_torch(python, "lean", best);
  if (same > 0 && lean > 0)
    std::printf("normsim vs PyTorch's best, same work: %.2fx; vs lean batched PyTorch's best: %.2fx\n",
                same / best, lean / best);
  else
    std::printf("PyTorch: not available (%s with torch)\n", python.c_str());
  return 0;
}
