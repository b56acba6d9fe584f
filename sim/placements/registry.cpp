// The list of placements, in the order `normsim list placements` shows them.
#include <array>
#include <stdexcept>
#include <string>

#include "sim/placements/all.hpp"

namespace normsim::sim {

std::span<const Placement* const> all_placements() {
  static const std::array<const Placement*, 12> list{
      &post_placement(),    &pre_placement(),      &peri_placement(),     &mix_placement(),
      &b2t_placement(),     &deepnorm_placement(), &spannorm_placement(), &hybridnorm_placement(),
      &lnscale_placement(), &admin_placement(),    &rezero_placement(),   &none_placement()};
  return list;
}

const Placement& find_placement(vocab::Placement id) {
  for (const Placement* p : all_placements())
    if (p->id() == id) return *p;
  throw std::invalid_argument("placement without an implementation");
}

}  // namespace normsim::sim
