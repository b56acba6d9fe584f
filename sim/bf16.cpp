#include "sim/bf16.hpp"

#include "sim/config.hpp"
#include "vocab/names.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::sim {

std::string bf16_refusal(const Config& c) {
  if (c.precision != vocab::Precision::bf16) return "";
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
