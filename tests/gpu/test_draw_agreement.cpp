// How far the CPU backend's weights (sim::fill_gaussian: Eigen's vectorized log/sin/cos) are from the
// per-entry draw the CUDA kernels make (sim::gaussian_at, here with the host's libm through the kernel's
// CPU twin). They are not bit-identical; this measures by how much, over 2^20 draws, and holds the bound
// that docs/gpu.md states. The device's logf/sinf/cosf add their own <= 2 ulps, which
// tests/gpu/test_gpu_ops.cpp bounds on a GPU.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu/ops.hpp"
#include "sim/draws.hpp"

namespace {

// Distance in units of float's spacing at the larger magnitude of the two.
double float_ulps(float a, float b) {
  const float big = std::max(std::abs(a), std::abs(b));
  const float spacing = std::nextafter(big, INFINITY) - big;
  return big == 0 ? 0.0 : double(std::abs(a - b)) / double(spacing);
}

}  // namespace

TEST_CASE("CPU weights and the kernels' per-entry draws: the measured difference", "[draws]") {
  const std::uint32_t sample = 3;
  const std::size_t n = std::size_t(1) << 18;
  std::size_t identical = 0, total = 0;
  double worst_ulps = 0, worst_abs = 0;
  for (const auto stream : {normsim::sim::Stream::w1, normsim::sim::Stream::w2, normsim::sim::Stream::wq,
                            normsim::sim::Stream::wo}) {
    std::vector<float> cpu(n), kernel(n);
    const double scale = 0.7;
    normsim::sim::fill_gaussian(cpu.data(), n, normsim::sim::DrawKey{99, sample, 5, stream}, scale);
    normsim::gpu::cpu::gaussian_fill(kernel.data(), n, 1, &sample, 99, 5, stream, scale);
    for (std::size_t i = 0; i < n; ++i) {
      identical += cpu[i] == kernel[i];
      worst_ulps = std::max(worst_ulps, float_ulps(cpu[i], kernel[i]));
      worst_abs = std::max(worst_abs, double(std::abs(cpu[i] - kernel[i])));
    }
    total += n;
  }
  std::printf(
      "draws: %zu of %zu CPU weights bit-identical to the kernels' draw (%.2f%%); worst %.1f float ulps, "
      "worst absolute %.3g\n",
      identical, total, 100.0 * double(identical) / double(total), worst_ulps, worst_abs);
  CHECK(identical < total);  // not bit-identical: if this ever fails, docs/gpu.md can say they are
  // Measured (GCC 12, glibc 2.36, Eigen 3.4): -march=native on AVX-512 45.05% identical, worst 5 ulps,
  // 4.8e-7 absolute; a build without -march (the sanitizer build's until it became native) 43.97%, 6 ulps,
  // 7.2e-7. The bounds leave room for
  // another libm or vector width, and stay far below what the backend tests' tolerances assume (1e-7 relative
  // in the weights).
  CHECK(worst_ulps <= 8);
  CHECK(worst_abs <= 1e-6);
}
