// Every built-in placement's numbers are guarded byte for byte: the values of layers.csv of every
// configuration of tests/data/placements_golden.toml (13 placements x 3 sublayer kinds x relu/swiglu x
// float32/float64, 2 samples; olmo2 is not in the grid) hash to the FNV-1a digests of
// tests/data/placements_golden_digests.csv. What those digests are, by the history of that file:
// - ceb210e wrote the 144 digests of the first 12 placements with the hand-written per-placement code, and
//   the block expressions that replaced it reproduced them bit for bit.
// - dacda9d (b2t, configs 48-59: B2T's official init) and bb66481 (DeepNorm x SwiGLU, 62, 63, 70, 71:
//   torchscale's beta rule) regenerated those whose init rule changed, from the expressions.
// - 5a9cc83 regenerated all 144 after a CPU-backend refactor changed last bits; its message reports the
//   whole grid compared between the previous binary (494b511) and the new one: float64 values differ by at
//   most 1.5e-14 relative, float32 by at most 1.7e-5 relative (both on one near-cancelling token_cos).
// - 9d90d1f added hybridnorm_star's 12 (144-155), written by its expression (it never had hand-written code).
// - The float32 products' move from Eigen's GEMM to thin_gemm (sim/cpu/thin_gemm.hpp) regenerated 65 float32
//   digests; the whole grid compared between the two binaries: float64 values identical, float32 values
//   within 1.2e-6 relative (worst: hybridnorm transformer's gradw_wk), 79 % of them bit for bit.
// - The vectorised float32 SiLU (issue 17) regenerated the 26 float32 SwiGLU digests with an MLP (mlp and
//   transformer: 2, 10, 14, ..., 154); the whole grid compared between the previous binary (92acfb4) and
//   the new one: the other 130 configurations identical bit for bit, those 26 within 5.2e-6 relative (on a
//   token_cos), 7.6e-7 at most on any other metric.
// - The float32 weight-gradient norms' move from Eigen's Gram products to thin_gram (sim/cpu/gram.hpp)
//   regenerated all 78 float32 digests; the whole grid compared between the previous binary (17b4648) and
//   the new one: float64 values identical, every float32 value other than a gradw_* identical, the gradw_*
//   within 1.3e-6 relative (worst: gradw_wk), 88 % of all rows bit for bit.
// - Issue 31's CPU stream fields from the row sums every device shares (sim/stream_sums.hpp: each token's
//   sums in index order, added in token order, where the CPU had Eigen's vectorised sums of the whole
//   matrix or of each row) regenerated all 156; the whole grid compared between the previous binary
//   (be3389a) and the new one: 13,979 of 17,160 values bit for bit, every changed value a stream field's
//   (grad_sq is act_sq's field of the gradient): act_sq, grad_sq, act_mean_abs (float64 only: float32
//   entries' absolute values sum exactly), cos_next and rel_update within 4 ulps (5.0e-16 relative);
//   token_cos within 341 ulps (4.3e-14 relative, on a value of 0.0017): its numerator columns - unit_sq,
//   two sums near T = 3 that cancel, moved by at most 10.5 ulps of 3 (unit_sq = sum_t ||u_t||^2 now adds
//   each row's r_sq / sqrt(r_sq)^2 instead of the squares of the normalised entries). Every other metric
//   (max, eff_rank, branch_sq, gradw_*, jacobians) identical.
// - 2026-11-29: on an Intel Xeon VM every attention and transformer configuration (104, float32 and
//   float64) gave other last bits than these, the MLP ones the same: g++ 12 tunes Zen 4 as znver3, whose
//   avoid-fma-max-bits=256 keeps a loop's accumulator out of FMAs (softmax's backward dot, the heads' small
//   products), where Intel's and the generic tuning fuse it. The build now fixes that parameter at 256
//   (CMakeLists.txt), and the Intel VM gives these digests, all 156; none was changed.
// So the digests are this code's own output, a guard against any change of the numbers; they tie to the
// hand-written code through ceb210e's exact match and 5a9cc83's comparison to within those bounds, not
// exactly. And a custom block holding a built-in's expression is that built-in; branch_scale scales the
// branch as the expression says.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "io/csv_read.hpp"
#include "same_records.hpp"
#include "sim/backend.hpp"
#include "sim/placement.hpp"
#include "test_util.hpp"

using normsim::test::read_text;
using normsim::test::ScratchDir;

// The digest comparison (and its helpers) exists only in the build the digests were taken from: see
// tests/sim/CMakeLists.txt.
#ifdef NORMSIM_GOLDEN_BUILD
namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// config id -> (rows, digest), from layers.csv. The digest is over the rows "sample,metric,index,value"
// (index: l, else k) sorted as text, each with its newline: what the numbers are, whatever columns and row
// order the file has (the digests were written from the layout of the time, config,...,sample,layer,...).
std::map<std::string, std::pair<int, std::uint64_t>> digests_of(const std::string& layers_csv) {
  std::istringstream in(layers_csv);
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::size_t> col;
  const auto head = normsim::io::csv_line_fields(line);
  for (std::size_t i = 0; i < head.size(); ++i) col[head[i]] = i;
  std::map<std::string, std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    const auto v = normsim::io::csv_line_fields(line);
    const std::string& index = v.at(col.at("l")).empty() ? v.at(col.at("k")) : v.at(col.at("l"));
    rows[v.at(col.at("config"))].push_back(v.at(col.at("sample")) + "," + v.at(col.at("metric")) + "," +
                                           index + "," + v.at(col.at("value")) + "\n");
  }
  std::map<std::string, std::pair<int, std::uint64_t>> out;
  for (auto& [config, r] : rows) {
    std::sort(r.begin(), r.end());
    std::string text;
    for (const auto& x : r) text += x;
    out[config] = {int(r.size()), fnv1a(text)};
  }
  return out;
}

}  // namespace

TEST_CASE("every built-in placement's expression reproduces the hand-written one bit for bit", "[golden]") {
  ScratchDir dir("golden");
  const std::string data = std::string(NORMSIM_SOURCE_DIR) + "/tests/data/";
  REQUIRE(normsim::test::run_config(data + "placements_golden.toml --threads 2", dir) == 0);
  const auto got = digests_of(read_text(dir / "out" / "layers.csv"));
  std::istringstream want(read_text(data + "placements_golden_digests.csv"));
  std::string line;
  std::getline(want, line);  // header
  int compared = 0;
  while (std::getline(want, line)) {
    char config[16] = {};
    int rows = 0;
    unsigned long long digest = 0;
    REQUIRE(std::sscanf(line.c_str(), "%15[^,],%d,%llx", config, &rows, &digest) == 3);
    INFO("config " << config << " (tests/data/placements_golden.toml's grid order)");
    REQUIRE(got.count(config) == 1);
    CHECK(got.at(config).first == rows);
    CHECK(got.at(config).second == digest);
    ++compared;
  }
  CHECK(compared == 156);
  CHECK(got.size() == 156);
}
#endif

using normsim::test::same_records;

namespace {

// ReZero with alpha = a, and the norm-free x + F(x) whose branch_scale is `scale` (ReZero's x + a F(x) when
// scale is a).
std::pair<normsim::sim::Config, normsim::sim::Config> rezero_and_scaled(double alpha, const char* scale) {
  normsim::sim::Config rezero;
  rezero.placement = normsim::vocab::Placement::rezero;
  rezero.rezero_alpha = alpha, rezero.depth = 4, rezero.width = 16, rezero.tokens = 3, rezero.samples = 2;
  normsim::sim::Config scaled = rezero;
  scaled.placement = normsim::vocab::Placement::none;
  scaled.branch_scale = std::string(scale);
  return {rezero, scaled};
}

}  // namespace

TEST_CASE("placement = custom with a built-in's expression is that built-in, bit for bit", "[golden]") {
  namespace sim = normsim::sim;
  namespace vocab = normsim::vocab;
  auto cpu = sim::make_backend(normsim::vocab::BackendChoice::cpu, 2);
  const std::vector<int> samples{0, 1};
  int compared = 0;
  for (const sim::Placement* p : sim::all_placements()) {
    if (p->expression().empty()) continue;  // Admin: code, not an expression
    for (auto sub : {vocab::Sublayer::mlp, vocab::Sublayer::transformer}) {
      sim::Config c;
      c.placement = p->id(), c.sublayer = sub;
      c.depth = 4, c.width = 16, c.tokens = 3, c.heads = 2, c.samples = 2;
      c.mix_fraction = 0.5, c.rezero_alpha = 0.5, c.spannorm_lambda = 0.7;
      sim::Config custom = c;
      custom.placement = vocab::Placement::custom;
      custom.block = std::string(p->expression());
      INFO(custom.block);
      CHECK(sim::placement_for(custom)->ends_in_norm(sim::StackShape(custom)) ==
            p->ends_in_norm(sim::StackShape(c)));
      c.placement_init = custom.placement_init = false;  // custom has no init rule (DeepNorm's, B2T's)
      CHECK(same_records(cpu->run(c, samples), cpu->run(custom, samples)));
      ++compared;
    }
  }
  CHECK(compared == 26);
}

TEST_CASE("branch_scale multiplies every branch output", "[golden]") {
  namespace sim = normsim::sim;
  auto cpu = sim::make_backend(normsim::vocab::BackendChoice::cpu, 2);
  // ReZero's x + a F(x) is the norm-free x + F(x) with branch_scale = a: the same graph, the same numbers.
  auto [rezero, scaled] = rezero_and_scaled(0.25, "1 / sqrt(K + 12)");  // 1/4
  const std::vector<int> samples{0, 1};
  CHECK(same_records(cpu->run(rezero, samples), cpu->run(scaled, samples)));
  scaled.branch_scale = "1 / sqrt(K + 12) + k * 0.01";  // differs past sublayer 0
  CHECK_FALSE(same_records(cpu->run(rezero, samples), cpu->run(scaled, samples)));
}

// docs/design/parametrization.md 5 (P1): a branch multiplier written with the power operator is the one
// written with sqrt: L^-0.5 at L = 4 blocks is 1/2 exactly, ReZero's alpha = 1/2, the same numbers.
TEST_CASE("branch_scale_pow", "[golden]") {
  auto cpu = normsim::sim::make_backend(normsim::vocab::BackendChoice::cpu, 2);
  auto [rezero, scaled] = rezero_and_scaled(0.5, "L^-0.5");
  const std::vector<int> samples{0, 1};
  CHECK(same_records(cpu->run(rezero, samples), cpu->run(scaled, samples)));
  scaled.branch_scale = "L^-0.5 * 2^-k";  // halves at every sublayer past the first
  CHECK_FALSE(same_records(cpu->run(rezero, samples), cpu->run(scaled, samples)));
}
