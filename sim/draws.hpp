// Bulk Gaussian draws on the CPU: fills a buffer with entries 0..n-1 of one keyed draw (gaussian.hpp),
// split across `threads`. Entry i is the same whatever the thread count or batch; it equals
// gaussian_at(key, i) * scale (what the CUDA kernels compute) to a few float ulps, not bit for bit
// (vectorized log/sin/cos): tests/gpu/test_draw_agreement.cpp measures the difference.
#pragma once
#include <cstddef>

#include "sim/gaussian.hpp"

namespace normsim::sim {

template <class R>
void fill_gaussian(R* out, std::size_t n, const DrawKey& key, double scale, int threads = 1);

}  // namespace normsim::sim
