// A float32 matrix of independent standard normal entries from std::mt19937 with a fixed seed: the
// operands of the kernel tests (thin_gemm, thin_gram, the drawn products).
#pragma once
#include <cstdint>
#include <random>

#include "sim/cpu_matrix.hpp"

namespace normsim::test {

inline sim::Mat<float> random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> z;
  sim::Mat<float> m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = z(gen);
  return m;
}

}  // namespace normsim::test
