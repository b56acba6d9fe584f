// Times the CPU's bulk Gaussian draws (sim/draws.hpp): fill_gaussian of one W1 weight matrix (512 x 2048
// entries, float32 and float64) on 1 and 2 threads, as nanoseconds per Gaussian per core (wall time x
// threads / entries), best of 5 passes of 50 fills each (the median shows the spread). A fill's key differs
// in every call, as between layers. The checksum hashes the bits of the last pass's entries: it changes if
// any draw changes in any bit (compare it across builds and commits).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "sim/draws.hpp"

namespace {

using namespace normsim::sim;

constexpr std::size_t kEntries = 512 * 2048;
constexpr int kPasses = 5, kFills = 50;

template <class R>
void time_fills(const char* type, int threads) {
  std::vector<R> w(kEntries);
  std::vector<double> ns(kPasses);
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int f = 0; f < kFills; ++f)
      fill_gaussian(w.data(), kEntries, DrawKey{7, 0, std::uint32_t(f), Stream::w1}, 1.0, threads);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ns[std::size_t(pass)] = s * 1e9 * threads / (double(kEntries) * kFills);
  }
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the bits of every entry
  for (const R v : w)
    hash = (hash ^ std::uint64_t(
                       std::bit_cast<std::conditional_t<sizeof(R) == 4, std::uint32_t, std::uint64_t>>(v))) *
           1099511628211ull;
  std::sort(ns.begin(), ns.end());
  std::printf(
      "fill_gaussian %s, %d thread%s: %.3f ns per Gaussian per core (median %.3f), checksum %016llx\n", type,
      threads, threads == 1 ? "" : "s", ns[0], ns[kPasses / 2], static_cast<unsigned long long>(hash));
}

}  // namespace

int main() {
  for (const int threads : {1, 2}) {
    time_fills<float>("float32", threads);
    time_fills<double>("float64", threads);
  }
}
