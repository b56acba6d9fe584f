// Storage that one running sample's optimizer state (sim/optimizer.hpp) takes from and that the CPU backend
// keeps from sample to sample and run to run (CpuWorkspace::optimizer_state), so that a grid's later
// configurations reuse the pages the earlier ones faulted in: Adam's D, m and v are three copies of the
// stack's weights, and a fresh mapping for them per configuration cost a coordinate sweep a sixth of its
// time in page faults (docs/benchmarks.md, "Coordinate checks").
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace normsim::sim {

template <class R>
class StateArena {
 public:
  // Starts over for a new owner, which expects to take about `expected` entries: every span taken before is
  // given up, and the storage is kept unless a block of `expected` entries does not fit in it.
  void reset(std::size_t expected) {
    if (blocks_.empty() || blocks_.front().size() < expected) {
      blocks_.clear();
      if (expected > 0) blocks_.emplace_back(expected);
    }
    block_ = used_ = 0;
  }
  // `n` entries set to zero, valid until the next reset (more blocks are made past what reset expected).
  R* take(std::size_t n) {
    while (block_ < blocks_.size() && blocks_[block_].size() - used_ < n) ++block_, used_ = 0;
    if (block_ == blocks_.size()) blocks_.emplace_back(n);
    R* span = blocks_[block_].data() + used_;
    used_ += n;
    std::fill(span, span + n, R(0));
    return span;
  }
  void release() { blocks_.clear(), block_ = used_ = 0; }

 private:
  std::vector<std::vector<R>> blocks_;
  std::size_t block_ = 0, used_ = 0;  // the block being taken from, and how much of it is taken
};

}  // namespace normsim::sim
