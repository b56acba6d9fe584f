// A weight's gradient g = A^T B (A = the matrix's input, T x n; B = its output's gradient, T x m) formed by
// blocks of rows of g across a sample's threads, each block handed on as soon as it is formed, so that the
// training loop's optimizer (sim/cpu/optimizer.hpp) takes it in while it is in cache instead of storing a
// weight-sized gradient per matrix.
//
// Each entry has the bits of Eigen's whole product A.transpose() * B: a row-major g is Eigen's column-major
// g^T = B^T A, whose columns (g's rows) are cut into panels of nr = 4 and whose rows (g's columns) into
// panels that depend on m alone; the depth blocking kc depends on T alone. A block of g's rows is then the
// same panels of the same problem, provided it starts at a multiple of 4 and no block becomes so small that
// Eigen takes another path (a single row: GEMV; rows + m + T < 20: the coefficient-wise product). Blocks are
// kRowBlock rows, the last one taking the remainder (tests/cpu/test_gradient_blocks.cpp compares the bits).
#pragma once
#include <algorithm>

#include "sim/cpu_matrix.hpp"
#include "sim/thread_split.hpp"

namespace normsim::sim {

inline constexpr Eigen::Index kRowBlock = 256;

// Forms g = A^T B into `out` (A.cols() x B.cols(), row-major) and calls done(first_row, rows) on each
// finished block of rows, on up to `threads` threads.
template <class R, class F>
void gradient_by_row_blocks(R* out, const Mat<R>& A, const Mat<R>& B, int threads, F done) {
  const Eigen::Index n = A.cols(), m = B.cols(), blocks = std::max<Eigen::Index>(1, n / kRowBlock);
  const double work = 2.0 * double(A.rows()) * double(n) * double(m);
  for_each_run(blocks, work, threads, [&](Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index j = first; j < last; ++j) {
      const Eigen::Index row = j * kRowBlock, rows = j + 1 == blocks ? n - row : kRowBlock;
      Eigen::Map<Mat<R>> g(out + row * m, rows, m);
      g.noalias() = A.middleCols(row, rows).transpose() * B;
      done(row, rows);
    }
  });
}

}  // namespace normsim::sim
