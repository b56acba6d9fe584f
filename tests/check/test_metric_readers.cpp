// The metric table (vocab/metrics.def) against the readers whose words it does not generate: the mean field's
// series (theory), the simulator's gradient metric of each weight (sim) and the figures' rule for the PyTorch
// bridge's own gradw_<parameter> (plots). Ids, names, definitions, symbols and axes are the table itself;
// Python's lists are checked in tests/python/test_module.py.
#include <catch2/catch.hpp>
#include <string>

#include "plots/metric_labels.hpp"
#include "sim/metrics.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack.hpp"
#include "theory/meanfield.hpp"

using namespace normsim;

TEST_CASE("each mean-field series named as a metric has the table's index", "[metrics][theory]") {
  theory::StackSpec spec;
  spec.placement = vocab::Placement::pre;
  spec.activation = vocab::Activation::swiglu;  // gradw_wgate
  spec.depth = 5;
  spec.random_update_scale = 0.1;  // output_change
  const theory::MeanFieldProfile profile = theory::meanfield(spec);
  int series = 0;
  for (const auto& row : vocab::metric_table()) {
    const theory::Series* s = profile.metric(row.name);
    if (!s) continue;
    INFO(row.name);
    ++series;
    CHECK(profile.name_of(s) == row.name);
    CHECK(s->size() == (row.index == vocab::MetricIndex::stream ? 6u : 5u));
  }
  // Every series of MeanFieldProfile, none left without a metric: a row of NORMSIM_MEANFIELD_FORWARD each,
  // and the seven written out there (grad_sq, jac_sq, the four gradw_, output_change).
#define NORMSIM_COUNT_ROW(...) +1
  constexpr int forward_rows = 0 NORMSIM_MEANFIELD_FORWARD(NORMSIM_COUNT_ROW);
#undef NORMSIM_COUNT_ROW
  CHECK(series == forward_rows + 7);
}

TEST_CASE("the gradient metric of each weight is the table's gradw_<weight>", "[metrics][sim]") {
  for (int w = 0; w < sim::kWeightKinds; ++w) {
    const auto kind = sim::WeightKind(w);
    const vocab::MetricInfo& row = vocab::metric_table()[std::size_t(sim::gradw_metric(kind))];
    CHECK(row.name == "gradw_" + std::string(sim::weight_name(kind)));
    CHECK(row.index == vocab::MetricIndex::sublayer);
    CHECK(row.pass == vocab::MetricPass::backward);
  }
}

TEST_CASE("figures read the bridge's gradw_<parameter> as the table's gradw_ rows", "[metrics][plots]") {
  const std::string bridge = "gradw_mlp.0.weight";  // a PyTorch parameter's name: not in the table
  REQUIRE(vocab::metric_id(bridge) < 0);
  const std::string frame = "‖∂{/:Italic L}/∂{/:Italic W}_";  // ‖∂L/∂W_w‖_F
  CHECK(plots::metric_label(bridge).enhanced.rfind(frame, 0) == 0);
  int rows = 0;
  for (const auto& row : vocab::metric_table()) {
    const std::string name(row.name);
    if (name.rfind("gradw_", 0) != 0) continue;
    INFO(name);
    ++rows;
    CHECK(plots::is_sublayer_metric(bridge) == (row.index == vocab::MetricIndex::sublayer));
    CHECK(plots::metric_log_scale(bridge) == row.log_scale);
    CHECK(plots::metric_label(name).enhanced.rfind(frame, 0) == 0);
  }
  CHECK(rows == sim::kWeightKinds);
}
