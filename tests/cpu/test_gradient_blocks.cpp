// gradient_by_row_blocks (sim/cpu/gradient_blocks.hpp) against Eigen's whole product A^T B, bit for bit: the
// training loop's optimizer forms each weight gradient by blocks of rows, and the steps' numbers must be
// those of the whole product whatever the thread count. Shapes cover one block and several, a remainder
// merged into the last block, rows not a multiple of 4, a single column (Eigen's GEMV) and T above Eigen's
// depth block (152 floats on this machine's L1), in float32 and float64.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <tuple>
#include <vector>

#include "random_matrix.hpp"
#include "sim/cpu/gradient_blocks.hpp"

using normsim::sim::gradient_by_row_blocks;
using normsim::sim::Mat;
using normsim::test::random_matrix;

namespace {

template <class R>
void require_same_bits(Eigen::Index T, Eigen::Index n, Eigen::Index m, int threads) {
  const Mat<R> A = random_matrix(T, n, 1).cast<R>(), B = random_matrix(T, m, 2).cast<R>();
  const Mat<R> whole = A.transpose() * B;
  std::vector<R> blocks(std::size_t(n * m));
  std::vector<int> done(std::size_t(n), 0);
  gradient_by_row_blocks<R>(blocks.data(), A, B, threads, [&](Eigen::Index row, Eigen::Index rows) {
    for (Eigen::Index r = row; r < row + rows; ++r) ++done[std::size_t(r)];
  });
  INFO("T " << T << ", g " << n << " x " << m << ", threads " << threads);
  CHECK(std::count(done.begin(), done.end(), 1) == n);  // every row handed on once
  CHECK(std::memcmp(blocks.data(), whole.data(), blocks.size() * sizeof(R)) == 0);
}

}  // namespace

TEST_CASE("a weight gradient formed by blocks of rows has the bits of the whole product",
          "[gradient_blocks]") {
  for (const auto& [T, n, m] : {std::tuple{64, 1024, 4096},
                                {64, 4096, 1024},
                                {64, 700, 300},
                                {64, 257, 5},
                                {16, 513, 3},
                                {200, 600, 130},
                                {3, 520, 1},
                                {64, 128, 512},
                                {7, 1030, 258}})
    for (const int threads : {1, 2, 3}) {
      require_same_bits<float>(T, n, m, threads);
      require_same_bits<double>(T, n, m, threads);
    }
}
