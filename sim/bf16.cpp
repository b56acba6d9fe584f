#include "sim/bf16.hpp"

#include "sim/config.hpp"
#include "vocab/names.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::sim {

std::string bf16_refusal(const Config& c) {
  if (c.precision != vocab::Precision::bf16) return "";
  // the training loop's optimizer (sim/cpu/optimizer.hpp) does not round its weights to bf16
  if (c.steps > 0)
    return "key 'steps': training steps in precision = \"bf16\" are not emulated yet (the optimizer keeps "
           "its "
           "weights unrounded); use precision = \"float32\" or steps = 0";
  const std::string what = vocab::layout(c.sublayer).has_attention()
                               ? "sublayer = \"" + std::string(vocab::name(c.sublayer)) + "\" attends"
                           : c.moe_experts > 0 ? "moe_experts > 0 routes the MLP"
                                               : "";
  if (what.empty()) return "";
  return "key 'precision': 'bf16' emulates the MLP sublayer's products only, and " + what +
         " (attention's and the router's products are not yet emulated in bf16; use precision = \"float32\" "
         "or sublayer = \"mlp\")";
}

}  // namespace normsim::sim
