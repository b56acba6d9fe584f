// theory.csv and the mean field's rows of nonfinite.csv (issue 25 1): where the mean field overflows, its
// entries are absent from theory.csv and named in nonfinite.csv (pass "meanfield", sample -1), as the
// simulator's non-finite statistics are; a rerun replaces those rows instead of repeating them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "meanfield_of/spec_from_config.hpp"
#include "meanfield_of/theory_overlay.hpp"
#include "sim/run/config_file.hpp"

using namespace normsim;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("an overflowed mean field is named in nonfinite.csv, never written as a number",
          "[check][theory]") {
  const sim::Grid grid = sim::parse_grid(
      "placement = \"none\"\nsublayer = \"mlp\"\nwidth = 16\ndepth = 4\nsamples = 2\ninit_gain = 1e100\n"
      "input_corr = 0.5\n",
      "overflow.toml");
  const fs::path out = fs::temp_directory_path() / "normsim_theory_overlay";
  fs::remove_all(out);
  fs::create_directories(out);
  std::ofstream(out / "nonfinite.csv") << "config,sample,pass,layer,metric\n0,1,forward,1,\n";
  meanfield_of::write_theory_csv(out, grid);
  const std::string theory = read_text(out / "theory.csv");
  CHECK(theory.find(",act_sq,0,,1\n") != std::string::npos);
  CHECK(theory.find(",token_cos,0,,0.5\n") != std::string::npos);
  CHECK(theory.find(",act_sq,1,") == std::string::npos);
  CHECK(theory.find(",token_cos,1,") == std::string::npos);    // was 0
  CHECK(theory.find(",rel_update,,0,") == std::string::npos);  // was 0
  const std::string nonfinite = read_text(out / "nonfinite.csv");
  CHECK(nonfinite.rfind("config,sample,pass,layer,metric\n0,1,forward,1,\n", 0) ==
        0);  // the simulator's kept
  CHECK(nonfinite.find("0,-1,meanfield,1,act_sq\n") != std::string::npos);
  CHECK(nonfinite.find("0,-1,meanfield,4,token_cos\n") != std::string::npos);
  CHECK(nonfinite.find("0,-1,meanfield,0,rel_update\n") != std::string::npos);
  CHECK(nonfinite.find("0,-1,meanfield,0,act_sq\n") == std::string::npos);
  meanfield_of::write_theory_csv(out, grid);  // a rerun: the same file, not the rows twice
  CHECK(read_text(out / "nonfinite.csv") == nonfinite);
  fs::remove_all(out);
}

// A zero input has no mean field; the reason names the key, not the mean field's internal field.
TEST_CASE("input_std = 0: no mean field, said by its key", "[meanfield]") {
  sim::Config c;
  c.input_std = 0.0;
  CHECK_THROWS_WITH(meanfield_of::to_stack_spec(c), Catch::Contains("input_std = 0"));
  c.vocab = 16;  // token ids: input_std is not read, and the mean field stands
  CHECK_NOTHROW(meanfield_of::to_stack_spec(c));
}
