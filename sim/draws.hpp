// Bulk Gaussian draws on the CPU: fills a buffer with entries 0..n-1 of one keyed draw (gaussian.hpp),
// so entry i equals gaussian_at(key, i) * scale exactly, whatever the thread or backend.
#pragma once
#include <cstddef>

#include "sim/gaussian.hpp"

namespace normsim::sim {

template <class R>
void fill_gaussian(R* out, std::size_t n, const DrawKey& key, double scale);

}  // namespace normsim::sim
