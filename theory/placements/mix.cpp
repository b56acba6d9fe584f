// Mix-LN (Li et al. 2024): blocks b < floor(mix_fraction * L) are Post-LN, the rest Pre-LN
// (theory.md §2.4; docs/conventions.md).
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int mix_post_blocks(const StackSpec& spec) {
  return static_cast<int>(std::floor(spec.mix_fraction * block_count(spec)));
}

int step_mix(StackContext& ctx, int k) {  // ctx.mix_post_blocks = mix_post_blocks(spec)
  return block_of(ctx.spec, k) < ctx.mix_post_blocks ? step_post(ctx, k) : step_pre(ctx, k);
}

}  // namespace normsim::theory::detail
