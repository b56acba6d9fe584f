// How many threads a piece of work inside one sample is worth, and how the pieces run. A parallel region
// ends only when every one of its threads has run, so on a machine where another process holds a core each
// region can wait a scheduler slice (milliseconds) instead of microseconds: split across 2 threads on a busy
// 2-core machine, the small stacks of tests/data/meanfield_golden.toml took 35.8 s instead of 0.4 s on one
// thread. Work below kMinWorkPerThread (about a third of a millisecond of arithmetic) per thread stays on
// one. Which thread computes a piece never changes a number (sim/cpu/cpu_parallel.hpp), so this decides
// speed only.
#pragma once
#include <omp.h>

#include <algorithm>

namespace normsim::sim {

// In scalar operations: a GEMM's 2mkn, a Gaussian draw's ~16 (Philox rounds and Box-Muller).
inline constexpr double kMinWorkPerThread = double(1 << 20);

inline int threads_worth(double work, int threads) {
  return int(std::clamp(work / kMinWorkPerThread, 1.0, double(std::max(threads, 1))));
}

// Calls f(p) for every piece p in [0, parts), the pieces side by side on up to `parts` threads. Inside a
// parallel region (cpu_backend.cpp's samples side by side with threads to spare) the pieces are tasks, run
// by this thread and by the team's threads that have no sample of their own: a nested region would start
// fresh threads for every piece of work (OpenMP reuses its thread pool only for the outermost level).
template <class F>
void run_pieces(int parts, F f) {
  if (parts <= 1) {
    if (parts == 1) f(0);
    return;
  }
  if (omp_in_parallel()) {
    // An unsigned count: clang 14's taskloop lowering compares its own unsigned trip count with the bound
    // and warns (-Wsign-compare) on an int one.
    const unsigned count = unsigned(parts);
#pragma omp taskloop grainsize(1) shared(f)
    for (unsigned p = 0; p < count; ++p) f(int(p));
  } else {
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) f(p);
  }
}

// Calls f(first, last) on contiguous runs [first, last) covering the n items [0, n), one run per piece,
// as many pieces as `work` (all n items together, in scalar operations) is worth on up to `threads`
// threads and at most n. Each item is handled whole by one piece, so which thread takes it changes no
// number.
template <class I, class F>
void for_each_run(I n, double work, int threads, F f) {
  const I parts = std::min(I(threads_worth(work, threads)), n);
  run_pieces(int(parts), [&](int p) { f(n * I(p) / parts, n * I(p + 1) / parts); });
}

}  // namespace normsim::sim
