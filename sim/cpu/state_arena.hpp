// Storage that one running sample's optimizer state (sim/cpu/optimizer.hpp) takes from and that the CPU
// backend keeps from sample to sample and run to run (CpuWorkspace::optimizer_state), so that a grid's later
// configurations reuse the pages the earlier ones faulted in: Adam's D, m and v are three copies of the
// stack's weights, and a fresh mapping for them per configuration cost a coordinate sweep a sixth of its
// time in page faults (docs/benchmarks.md, "Coordinate checks"). The block grows by realloc, which moves a
// large block's pages (mremap) rather than faulting in new ones for the part it had.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace normsim::sim {

template <class R>
class StateArena {
 public:
  StateArena() = default;
  StateArena(const StateArena&) = delete;
  StateArena& operator=(const StateArena&) = delete;
  StateArena(StateArena&& o) noexcept : blocks_(std::move(o.blocks_)) { o.blocks_.clear(); }
  ~StateArena() { release(); }
  // Starts over for a new owner, which expects to take about `expected` entries: every span taken before is
  // given up, and the first block grows to `expected` entries where it is smaller.
  void reset(std::size_t expected) {
    if (expected > 0 && (blocks_.empty() || blocks_.front().size < expected)) {
      if (blocks_.empty()) blocks_.push_back({nullptr, 0});
      grow(blocks_.front(), expected);
    }
    block_ = used_ = 0;
  }
  // `n` entries, not initialised (the owner zeroes them on its threads, where the pages are first touched),
  // valid until the next reset; more blocks are made past what reset expected.
  R* take(std::size_t n) {
    while (block_ < blocks_.size() && blocks_[block_].size - used_ < n) ++block_, used_ = 0;
    if (block_ == blocks_.size()) {
      blocks_.push_back({nullptr, 0});
      grow(blocks_.back(), n);
    }
    R* span = blocks_[block_].data + used_;
    used_ += n;
    return span;
  }
  void release() {
    for (Block& b : blocks_) std::free(b.data);
    blocks_.clear();
    block_ = used_ = 0;
  }

 private:
  struct Block {
    R* data;
    std::size_t size;
  };
  static void grow(Block& b, std::size_t n) {
    void* p = std::realloc(b.data, n * sizeof(R));
    if (!p) throw std::bad_alloc();
    b = {static_cast<R*>(p), n};
  }
  std::vector<Block> blocks_;
  std::size_t block_ = 0, used_ = 0;  // the block being taken from, and how much of it is taken
};

}  // namespace normsim::sim
