// Times the mean-field recursion: 10,000 sublayers of every placement (ReLU MLP stacks, the closed-form
// kernel path), forward and backward with every metric. Target: < 10 ms in total. Prints the wall time and
// the process CPU time (on a loaded machine the wall time includes time spent descheduled).
#include <chrono>
#include <cstdio>
#include <ctime>

#include "theory/meanfield.hpp"

int main() {
  using namespace normsim::theory;
  constexpr Placement kAll[] = {Placement::post,     Placement::pre,        Placement::peri,
                                Placement::mix,      Placement::b2t,        Placement::deepnorm,
                                Placement::lnscale,  Placement::admin,      Placement::rezero,
                                Placement::spannorm, Placement::hybridnorm, Placement::none};
  double checksum = 0.0;
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  for (Placement p : kAll) {
    StackSpec spec;
    spec.placement = p;
    spec.depth = 10000;
    spec.rezero_alpha = 0.01;
    const MeanFieldProfile prof = meanfield(spec);
    checksum += prof.act_sq[1].value_or(0.0) + prof.grad_sq[0].value_or(0.0);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const double cpu_ms = 1000.0 * double(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::printf(
      "normsim_theory_bench: 12 placements x 10000 sublayers: %.3f ms total (cpu %.3f ms; checksum %.6g)\n",
      ms, cpu_ms, checksum);
  return 0;
}
