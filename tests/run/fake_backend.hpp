// A deterministic stand-in for a compute backend, so the sweep and result files are tested without the
// numerics: every value is a closed-form function of (config, sample, metric, layer), and chosen samples
// "blow up" (NaN from some layer on, with nonfinite set).
#pragma once
#include <cmath>
#include <stdexcept>

#include "sim/backend.hpp"
#include "sim/metrics.hpp"

namespace normsim::test {

class FakeBackend : public sim::Backend {
 public:
  // After `fail_after` runs, every run throws (an interrupted sweep); -1: never.
  explicit FakeBackend(int fail_after = -1) : fail_after_(fail_after) {}
  std::string name() const override { return "fake"; }
  std::vector<sim::SampleRecord> run(const sim::Config& c, std::span<const int> samples) override {
    if (fail_after_ >= 0 && calls_ >= fail_after_) throw std::runtime_error("fake backend interrupted");
    ++calls_;
    std::vector<sim::SampleRecord> out;
    for (int s : samples) out.push_back(record(c, s));
    return out;
  }
  int calls() const { return calls_; }

  static sim::SampleRecord record(const sim::Config& c, int s) {
    sim::SampleRecord r;
    r.sample = s;
    const auto table = sim::metric_table();
    // post-LN configs with norm_gain 3 blow up in sample 1 at layer 2 of the forward pass.
    const bool blows_up = c.placement == normsim::vocab::Placement::post && c.norm_gain == 3.0 && s == 1;
    if (blows_up) r.nonfinite = sim::NonFinite{"forward", 2};
    r.values.resize(table.size());
    for (std::size_t m = 0; m < table.size(); ++m) {
      const bool attention_weight = table[m].name == "gradw_wq" || table[m].name == "gradw_wk" ||
                                    table[m].name == "gradw_wv" || table[m].name == "gradw_wo";
      const int n = table[m].index == sim::MetricIndex::stream ? c.depth + 1 : c.depth;
      r.values[m].resize(n);
      for (int l = 0; l < n; ++l) {
        double v = (1.0 + 0.1 * s) * (l + 1) / 3.0 + 0.01 * static_cast<double>(m) + c.width * 1e-3 +
                   (c.placement == normsim::vocab::Placement::post ? 0.5 : 0.0);
        if (attention_weight && c.sublayer == normsim::vocab::Sublayer::mlp) v = NAN;  // no such matrix
        if (blows_up && l >= 2) v = (l % 2) ? INFINITY : NAN;
        r.values[m][l] = v;
      }
    }
    return r;
  }

 private:
  int fail_after_;
  int calls_ = 0;
};

}  // namespace normsim::test
