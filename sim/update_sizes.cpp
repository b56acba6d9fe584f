// The coordinate-check sizes of a step's updates (sim/update_sizes.hpp).
#include "sim/update_sizes.hpp"

#include <limits>

namespace normsim::sim {

UpdateSizes::UpdateSizes(int depth) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::array<double, kWeightKinds> none;
  none.fill(nan);
  dwx.assign(std::size_t(depth), none);
  rel_dw.assign(std::size_t(depth), none);
  edge_dwx.fill(nan);
  edge_rel_dw.fill(nan);
}

void UpdateSizes::put(int k, int w, double dwx_value, double rel_dw_value) {
  if (k < 0) {
    edge_dwx[std::size_t(w)] = dwx_value;
    edge_rel_dw[std::size_t(w)] = rel_dw_value;
  } else if (k < int(dwx.size())) {
    dwx[std::size_t(k)][std::size_t(w)] = dwx_value;
    rel_dw[std::size_t(k)][std::size_t(w)] = rel_dw_value;
  }
}

}  // namespace normsim::sim
