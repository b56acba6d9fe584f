// Work inside one sample split across threads, with results that do not depend on the thread count.
// A product C = A B is cut into fixed blocks of kColumnBlock columns of C, a partition that depends on
// the shapes alone; each block is one single-threaded GEMM (thin_gemm.hpp's in float32 with AVX-512,
// Eigen's otherwise), computed by whichever thread takes it, so every entry of C has the same summation
// order for any number of threads. Weight draws split the same way over fill_gaussian's fixed chunk grid
// (sim/draws.hpp), or, where a float32 forward draws its weight inside the product (drawn_product.hpp), over
// the product's column blocks; attention splits by heads, each head computed whole by one thread
// (cpu_heads.hpp). All of them split into contiguous runs by for_each_run (sim/thread_split.hpp).
// CpuWorkspace is what one running sample reuses from layer to layer (and, held by the backend per thread,
// from sample to sample): the buffer every weight matrix is drawn into where it is drawn whole (the backward,
// and forwards that cannot draw inside the product), so no weight is stored for the whole stack and the hot
// path allocates nothing new; or, when the backend's memory budget allows (keep_weights), one buffer per
// matrix of the stack, drawn in the forward and read again by the same pass's backward instead of being
// redrawn (the same bits: draws are pure functions).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "sim/cpu/state_arena.hpp"
#include "sim/cpu/thin_gemm.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/draws.hpp"
#include "sim/thread_split.hpp"

namespace normsim::sim {

template <class R>
struct CpuWorkspace {
  int threads = 1;  // threads that work on this sample
  Mat<R> weight;    // the weight matrix being used where it is drawn whole, redrawn when needed again
  bool keep_weights = false;
  // With keep_weights: matrix `slot` of the stack as drawn by pass kept_pass[slot]. A pass (one CpuTape)
  // takes a new number, so it never reads a matrix another pass or sample drew.
  std::vector<Mat<R>> kept;
  std::vector<std::uint64_t> kept_pass;
  std::uint64_t pass = 0;
  StateArena<R> optimizer_state;  // the training loop's Adam state (sim/cpu/state_arena.hpp)
};

inline constexpr Eigen::Index kColumnBlock = 256;

// Calls f(first, count) on every block of kColumnBlock columns of n, split across as many of `threads` as
// `work` (all the blocks together) is worth.
template <class F>
void for_column_blocks(Eigen::Index n, double work, int threads, F f) {
  const Eigen::Index blocks = (n + kColumnBlock - 1) / kColumnBlock;
  for_each_run(blocks, work, threads, [&](Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index j = first; j < last; ++j)
      f(j * kColumnBlock, std::min(kColumnBlock, n - j * kColumnBlock));
  });
}

// Whether c = a b runs on thin_gemm: float32 where it is built, a a matrix and b a matrix or a transposed
// one.
template <class R, class DA, class DB>
constexpr bool uses_thin_gemm() {
  return has_thin_gemm && std::is_same_v<R, float> && std::is_same_v<DA, Mat<float>> &&
         (std::is_same_v<DB, Mat<float>> || std::is_same_v<DB, Eigen::Transpose<const Mat<float>>>);
}

// Columns [first, first + count) of c (+)= a b on thin_gemm; at = a^T (k x T) where b is a transposed matrix.
template <class DB>
void thin_block(Mat<float>& c, const Mat<float>& a, const DB& b, const float* at, Eigen::Index first,
                Eigen::Index count, bool accumulate) {
  if constexpr (std::is_same_v<DB, Mat<float>>) {
    thin_gemm_aw(c.data() + first, c.cols(), a.data(), a.cols(), b.data() + first, b.cols(), a.rows(),
                 a.cols(), count, accumulate);
  } else {  // b = W^T: its columns are W's rows
    const Mat<float>& w = b.nestedExpression();
    thin_gemm_awt(c.data() + first, c.cols(), at, w.data() + first * w.cols(), w.cols(), a.rows(), a.cols(),
                  count, accumulate);
  }
}

// c = a * b (accumulate: c += a * b), block of columns by block; after(first, count) runs on each block
// of c once it is final, on the thread that computed it (an elementwise epilogue).
template <class R, class DA, class DB, class After>
void product_by_columns(Mat<R>& c, const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b,
                        bool accumulate, int threads, After after) {
  if (!accumulate) c.resize(a.rows(), b.cols());
  const double work = 2.0 * double(a.rows()) * double(a.cols()) * double(b.cols());
  eigen_assert(c.rows() == a.rows() && c.cols() == b.cols());
  // a^T for thin_gemm_awt, in a buffer per calling thread that only grows, so the hot path allocates
  // nothing new. Only this thread writes it, before the product's pieces start, and no piece calls
  // product_by_columns, so while this thread waits on the pieces nothing overwrites it; it is named
  // through a pointer because inside the parallel region `at_of_thread` would be each worker's own.
  thread_local std::vector<R> at_of_thread;
  const R* at = nullptr;
  if constexpr (uses_thin_gemm<R, DA, DB>() && !std::is_same_v<DB, Mat<float>>) {
    if (at_of_thread.size() < std::size_t(a.size())) at_of_thread.resize(std::size_t(a.size()));
    transpose_for_awt(at_of_thread.data(), a.derived().data(), a.cols(), a.rows(), a.cols());
    at = at_of_thread.data();
  }
  for_column_blocks(b.cols(), work, threads, [&](Eigen::Index first, Eigen::Index count) {
    if constexpr (uses_thin_gemm<R, DA, DB>())
      thin_block(c, a.derived(), b.derived(), at, first, count, accumulate);
    else if (accumulate)
      c.middleCols(first, count).noalias() += a * b.middleCols(first, count);
    else
      c.middleCols(first, count).noalias() = a * b.middleCols(first, count);
    after(first, count);
  });
}

template <class R, class DA, class DB>
void product_by_columns(Mat<R>& c, const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b,
                        bool accumulate, int threads) {
  product_by_columns(c, a, b, accumulate, threads, [](Eigen::Index, Eigen::Index) {});
}

// m (rows x cols) drawn for weight matrix `key` with standard deviation `scale`, split across `threads`.
template <class R>
void draw_matrix(Mat<R>& m, Eigen::Index rows, Eigen::Index cols, const DrawKey& key, double scale,
                 int threads) {
  m.resize(rows, cols);
  fill_gaussian(m.data(), std::size_t(m.size()), key, scale, threads);
}

}  // namespace normsim::sim
