// One sample's stack on its own float64 CPU tape, with the input and readout the simulator draws for sample
// 0: the fixture of the tests that differentiate a block by hand (finite differences through lanes, the value
// residual's V_1).
#pragma once
#include <memory>

#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/inputs.hpp"
#include "sim/placement.hpp"
#include "sim/stack_build.hpp"

namespace normsim::test {

// Sample 0's input x_0 (input_std 1, input_corr 0.2).
inline sim::Mat<double> input_of(const sim::Config& c) {
  sim::Mat<double> x0(c.tokens, c.width);
  for (int t = 0; t < c.tokens; ++t)
    for (int i = 0; i < c.width; ++i) x0(t, i) = sim::input_entry(c.seed, 0, t, i, c.width, 1.0, 0.2);
  return x0;
}

// One stack on its own tape (the same Philox weights for every config of the same seed and shape).
struct TapedStack {
  sim::Config c;
  sim::StackShape shape;
  std::shared_ptr<const sim::Placement> p;
  sim::CpuTape<double> g;
  sim::StackValues sv;
  sim::Value input;
  sim::PlacementState state;  // what the build carried (V_1 of a block with Fv in first_values)
  explicit TapedStack(const sim::Config& config, const sim::Mat<double>& x0)
      : c(config), shape(c), p(sim::placement_for(c)), g(shape, *p, sim::SampleKey{c.seed, 0}) {
    input = g.input(x0);
    sv = sim::build_stack(g, shape, *p, input, &state);
  }
  const sim::Mat<double>& at(sim::Value v) const { return g.value(v); }
};

// sum over entries of r * y with a fixed readout r: a loss whose gradient dLoss/dy is r.
inline double readout_loss(const sim::Config& c, const sim::Mat<double>& y, sim::Mat<double>* dy = nullptr) {
  double loss = 0;
  if (dy) dy->resize(y.rows(), y.cols());
  for (int t = 0; t < y.rows(); ++t)
    for (int i = 0; i < y.cols(); ++i) {
      const double r = sim::readout_entry(c.seed, 0, t, i, int(y.cols()));
      loss += r * y(t, i);
      if (dy) (*dy)(t, i) = r;
    }
  return loss;
}

}  // namespace normsim::test
