// Central differences of a scalar loss in every entry of a matrix the loss reads, shared by the branch
// tests that check weight-gradient norms (test_cross_attention_fd.cpp, test_attention_gate.cpp).
#pragma once
#include <cmath>

#include "sim/cpu_matrix.hpp"

namespace normsim::test {

// Frobenius norm of the central-difference gradient of loss() in every entry of m (into grad if given);
// h = 1e-6 as the tests' tolerances assume.
template <class Loss>
double fd_norm(sim::Mat<double>& m, Loss&& loss, sim::Mat<double>* grad = nullptr) {
  const double h = 1e-6;
  double sq = 0;
  for (int i = 0; i < m.size(); ++i) {
    const double keep = m.data()[i];
    m.data()[i] = keep + h;
    const double up = loss();
    m.data()[i] = keep - h;
    const double down = loss();
    m.data()[i] = keep;
    const double g = (up - down) / (2 * h);
    if (grad) grad->data()[i] = g;
    sq += g * g;
  }
  return std::sqrt(sq);
}

}  // namespace normsim::test
