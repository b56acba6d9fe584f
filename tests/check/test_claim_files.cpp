// Claim files: the project's own all load, and a malformed one is an error that names file, line and key.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "app/check_command.hpp"
#include "check/claim.hpp"
#include "check/measure.hpp"
#include "plots/results_folder.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/metrics.hpp"
#include "sim/run/out_lock.hpp"

using namespace normsim::check;
using normsim::app::check_command;
namespace fs = std::filesystem;

namespace {

const char* kGood = R"toml(id = "tiny"
kind = "self"
statement = "Pre-LN act_sq is linear"
source = "theory.md §3(a)"
quote = "v_l grows linearly"
band_source = "theory.md: the mean field is exact at infinite width"
testable_at_init = true

[sweep]
placement = "pre"
width = 32
depth = [4, 8]
samples = 2

[measure]
metric = "act_sq"
layer = "last"

[fit]
kind = "powerlaw"

[prediction]
value = "meanfield"
rel_tolerance = 0.1

[full]
samples = 8
)toml";

fs::path write_file(const std::string& name, const std::string& text) {
  // One folder per process: two test runs at once (two build trees on one machine) must not share files.
  const fs::path dir = fs::temp_directory_path() / ("normsim_check_test." + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

std::string error_of(const std::string& text) {
  const fs::path f = write_file("bad.toml", text);
  try {
    load_claim(f);
  } catch (const ClaimError& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

}  // namespace

TEST_CASE("a claim file reads into a grid and a statistic", "[check][claims]") {
  const ClaimSpec c = load_claim(write_file("good.toml", kGood));
  CHECK(c.id == "tiny");
  CHECK(c.kind == ClaimKind::self);
  CHECK(c.x_key == "depth");
  REQUIRE(c.grid.configs.size() == 2);
  CHECK(c.grid.configs[1].depth == 8);
  CHECK(c.grid.configs[0].samples == 2);
  CHECK(c.fit == FitKind::powerlaw);
  CHECK(c.log_x);
  CHECK(c.log_y);
  CHECK(c.meanfield);
  CHECK(load_claim(write_file("good.toml", kGood), true).grid.configs[0].samples == 8);
}

TEST_CASE("a malformed claim file names file, line and key", "[check][claims]") {
  std::string e = error_of(replaced(kGood, "kind = \"powerlaw\"", "kind = \"cubic\""));
  CHECK_THAT(e, Catch::Contains("bad.toml:20: key 'fit.kind'"));
  e = error_of(replaced(kGood, "width = 32", "widht = 32"));
  CHECK_THAT(e, Catch::Contains("bad.toml:11: unknown key 'widht'"));
  e = error_of(replaced(kGood, "width = 32", "width = -3"));
  CHECK_THAT(e, Catch::Contains("bad.toml:11: key 'width'"));
  e = error_of(replaced(kGood, "rel_tolerance = 0.1", "rel_tolerance = \"wide\""));
  CHECK_THAT(e, Catch::Contains("bad.toml:24: key 'prediction.rel_tolerance'"));
  e = error_of(replaced(kGood, "layer = \"last\"", "layer = \"last\"\ncolour = 1"));
  CHECK_THAT(e, Catch::Contains("bad.toml:18: key 'measure.colour'"));
  e = error_of(replaced(kGood, "statement = \"Pre-LN act_sq is linear\"\n", ""));
  CHECK_THAT(e, Catch::Contains("key 'statement'"));
  e = error_of(replaced(kGood, "[fit]", "[fit"));
  CHECK_THAT(e, Catch::Contains("bad.toml:19: TOML syntax error"));
}

// Issue 16: values that parse but cannot be measured are errors at their line, as in config files.
TEST_CASE("a claim's layers, metric and numbers are checked against its sweep", "[check][claims]") {
  // depth 4 is the shallowest config: act_sq has 5 entries (0..4, or -5..-1).
  std::string e = error_of(replaced(kGood, "layer = \"last\"", "layer = \"99\""));
  CHECK_THAT(e,
             Catch::Contains("bad.toml:17: key 'measure.layer'") && Catch::Contains("outside the 5 entries"));
  CHECK(error_of(replaced(kGood, "layer = \"last\"", "layer = \"-5\"")).empty());
  e = error_of(replaced(kGood, "layer = \"last\"", "layer = \"last\"\nlayers = \"5:2\""));
  CHECK_THAT(e, Catch::Contains("bad.toml:18: key 'measure.layers'") && Catch::Contains("selects no layer"));
  e = error_of(replaced(kGood, "rel_tolerance = 0.1", "rel_tolerance = nan"));
  CHECK_THAT(e, Catch::Contains("bad.toml:24: key 'prediction.rel_tolerance': must be a finite number"));
  e = error_of(replaced(kGood, "metric = \"act_sq\"", "metric = \"act_sq*gradz\""));
  CHECK_THAT(e, Catch::Contains("bad.toml:16: key 'measure.metric': unknown metric 'gradz'"));
  e = error_of(replaced(kGood, "layer = \"last\"", "layer = \"last\"\ndenominator = \"first\""));
  CHECK_THAT(e, Catch::Contains("key 'measure.denominator': only a ratio fit reads it"));
  e = error_of(replaced(kGood, "metric = \"act_sq\"", "metric = \"act_sq*cos_next\""));
  CHECK_THAT(e, Catch::Contains("no common index"));
}

TEST_CASE("every claim of experiments/claims loads, default and full", "[check][claims]") {
  const fs::path dir = fs::path(NORMSIM_SOURCE_DIR) / "experiments" / "claims";
  const auto claims = load_claims(dir);
  CHECK(claims.size() >= 20);
  CHECK(load_claims(dir, {}, true).size() == claims.size());
  CHECK_THROWS_AS(load_claims(dir, {"no_such_claim"}), ClaimError);
  // A misspelled id is answered with the closest one.
  const std::string id = claims.front().id;
  CHECK_THROWS_WITH(load_claims(dir, {id + "x"}), Catch::Contains("no claim with id '" + id + "x'") &&
                                                      Catch::Contains("did you mean '" + id + "'?"));
}

TEST_CASE("every claim of experiments/claims says where its band comes from", "[check][claims]") {
  // A band read off the data would make the verdict circular; each file names its source or principle.
  for (const auto& c : load_claims(fs::path(NORMSIM_SOURCE_DIR) / "experiments" / "claims")) {
    INFO(c.file);
    CHECK(c.band_source.size() > 20);
  }
}

TEST_CASE("a claim file reads band_source and testable_at_init", "[check][claims]") {
  const ClaimSpec plain = load_claim(write_file("plain.toml", kGood));
  CHECK(plain.band_source == "theory.md: the mean field is exact at infinite width");
  CHECK(plain.testable_at_init);
  CHECK(plain.quote == "v_l grows linearly");
  const std::string marked = replaced(kGood, "testable_at_init = true", "testable_at_init = false");
  const ClaimSpec c = load_claim(write_file("marked.toml", marked));
  CHECK(!c.testable_at_init);
  CHECK(error_of(replaced(marked, "testable_at_init = false", "testable_at_init = \"no\""))
            .find("bad.toml:7: key 'testable_at_init': expected true or false") != std::string::npos);
  // docs/claims.md requires band_source: a band must say where it comes from.
  CHECK_THAT(error_of(replaced(
                 kGood, "band_source = \"theory.md: the mean field is exact at infinite width\"\n", "")),
             Catch::Contains("key 'band_source': missing"));
  // Every file decides it (docs/claims.md's one rule), and quotes the words it tests.
  CHECK_THAT(error_of(replaced(kGood, "testable_at_init = true\n", "")),
             Catch::Contains("bad.toml:1: key 'testable_at_init': missing"));
  CHECK_THAT(error_of(replaced(kGood, "quote = \"v_l grows linearly\"\n", "")),
             Catch::Contains("key 'quote'"));
}

// Issue 24: a reading of a source is its own kind and names the source it reads; a statement on unconfirmed
// equations is not judged; a claim read at several sample counts widens its intervals (Bonferroni).
TEST_CASE("a claim file reads its kind, reading_of, judged and looks", "[check][claims]") {
  const std::string reading =
      replaced(kGood, "kind = \"self\"", "kind = \"reading\"\nreading_of = \"the X paper\"");
  const ClaimSpec r = load_claim(write_file("reading.toml", reading));
  CHECK(r.kind == ClaimKind::reading);
  CHECK(r.reading_of == "the X paper");
  CHECK(r.judged);
  CHECK(r.confidence == 0.95);
  CHECK_THAT(error_of(replaced(kGood, "kind = \"self\"", "kind = \"reading\"")),
             Catch::Contains("key 'reading_of'"));
  CHECK_THAT(error_of(replaced(kGood, "kind = \"self\"", "kind = \"self\"\nreading_of = \"x\"")),
             Catch::Contains("key 'reading_of': only a claim of kind"));
  CHECK_THAT(error_of(replaced(kGood, "kind = \"self\"", "kind = \"opinion\"")),
             Catch::Contains("key 'kind'"));
  const ClaimSpec unjudged = load_claim(
      write_file("unjudged.toml", replaced(kGood, "kind = \"self\"", "kind = \"self\"\njudged = false")));
  CHECK(!unjudged.judged);
  const auto with_looks = [](const std::string& looks) {
    return replaced(replaced(kGood, "samples = 2", "samples = 4"), "kind = \"self\"",
                    "kind = \"self\"\nlooks = " + looks);
  };
  const ClaimSpec looked = load_claim(write_file("looks.toml", with_looks("[2, 4]")));
  CHECK(looked.looks == std::vector<int>{2, 4});
  CHECK(looked.confidence == Approx(0.975));
  CHECK_THAT(error_of(with_looks("[2, 3]")),
             Catch::Contains("key 'looks': the last look must be the sweep's samples"));
  CHECK_THAT(error_of(with_looks("[4, 2]")), Catch::Contains("key 'looks': expected increasing"));
  // A --full run at its own sample count is one more look: 3 here, and 2 for a claim with no looks.
  CHECK(load_claim(write_file("looks_full.toml", with_looks("[2, 4]")), true).confidence ==
        Approx(1 - 0.05 / 3));
  CHECK(load_claim(write_file("full.toml", kGood), true).confidence == Approx(0.975));
  CHECK(load_claim(write_file("default.toml", kGood)).confidence == 0.95);
}

// Issue 25 9: a band of zero width can never support a claim, so it is refused at its line.
TEST_CASE("a claim file with a zero-width band is refused", "[check][claims]") {
  CHECK_THAT(error_of(replaced(kGood, "rel_tolerance = 0.1", "lower = 1.0\nupper = 1.0")),
             Catch::Contains("key 'prediction.lower': must be below prediction.upper"));
  CHECK_THAT(error_of(replaced(kGood, "rel_tolerance = 0.1", "tolerance = 0")),
             Catch::Contains("key 'prediction.tolerance': missing: value alone is a band of zero width"));
}
TEST_CASE("check_command: usage errors and malformed claims exit 2", "[check][cli]") {
  CHECK(check_command({"--help"}) == 0);
  CHECK(check_command({"--bogus"}) == 2);
  CHECK(check_command({"--threads", "x"}) == 2);
  const fs::path dir = fs::temp_directory_path() / "normsim_check_badclaims";
  fs::create_directories(dir);
  std::ofstream(dir / "bad.toml") << replaced(kGood, "kind = \"powerlaw\"", "kind = \"cubic\"");
  CHECK(check_command({"--claims", dir.string(), "--quiet", "--no-plots"}) == 2);
}

TEST_CASE("check_command writes verdicts, report and per-claim data", "[check][cli]") {
  const fs::path dir = fs::temp_directory_path() / "normsim_check_goodclaims";
  const fs::path out = fs::temp_directory_path() / "normsim_check_out";
  fs::create_directories(dir);
  fs::remove_all(out);
  std::ofstream(dir / "tiny.toml") << kGood;
  const int rc = check_command({"--claims", dir.string(), "--out", out.string(), "--quiet", "--no-plots",
                                "--threads", "1", "--backend", "cpu"});
  CHECK((rc == 0 || rc == 1));
  for (const char* f : {"verdicts.json", "report.md", "summary.csv", "run.json", "claims/tiny/data.csv"})
    CHECK(fs::is_regular_file(out / f));
  std::ifstream data(out / "claims/tiny/data.csv");
  std::string header;
  std::getline(data, header);
  CHECK(header == "x,measured,se,predicted");
  // --no-plots draws no figure, so report.md links none (issue 25 13).
  std::ifstream report(out / "report.md");
  const std::string md(std::istreambuf_iterator<char>(report), {});
  CHECK(md.find("figures/claim_") == std::string::npos);
  CHECK(md.find("| not drawn |") != std::string::npos);
  // Provenance (issue 29 7): which backend and device computed each number.
  const normsim::sim::CpuBackend cpu(1);
  CHECK_THAT(md, Catch::Contains("Measured by:\n- `cpu` on " + cpu.device() + ": 1 claim"));
  std::ifstream verdicts(out / "verdicts.json");
  const auto v = nlohmann::json::parse(verdicts);
  CHECK(v.at(0).at("backend") == "cpu");
  CHECK(v.at(0).at("device") == cpu.device());
  std::ifstream run(out / "run.json");
  const auto info = nlohmann::json::parse(run);
  CHECK(info.at("device") == cpu.device());
  // Each config's own time, as `normsim run`'s run.json has it (it had none), in the configs' order.
  const auto& seconds = info.at("timings").at("configs_seconds");
  REQUIRE(seconds.size() == info.at("configs").size());
  for (const auto& s : seconds) CHECK(s.get<double>() > 0);
  CHECK(info.at("timings").at("total_seconds").get<double>() <=
        info.at("timings").at("wall_seconds").get<double>());
}

TEST_CASE("a [reference] config is compared sample by sample", "[check][claims]") {
  const std::string text = replaced(replaced(kGood, "kind = \"powerlaw\"", "kind = \"bound\""), "[full]",
                                    "[reference]\nplacement = \"post\"\n\n[full]");
  const ClaimSpec c = load_claim(write_file("ref.toml", text));
  REQUIRE(c.reference);
  CHECK(c.reference->placement == normsim::vocab::Placement::post);
  CHECK(c.reference->width == 32);
  // Post-LN reads the swept depth: one reference per point, at its depth ("post minus pre at each depth").
  REQUIRE(c.reference_per_x.size() == c.grid.configs.size());
  for (std::size_t i = 0; i < c.grid.configs.size(); ++i) {
    CHECK(c.reference_per_x[i].depth == c.grid.configs[i].depth);
    CHECK(c.reference_per_x[i].placement == normsim::vocab::Placement::post);
  }
  // A reference that does not read the swept key stays one config.
  const ClaimSpec lambda = load_claim(write_file(
      "ref_lambda.toml", replaced(replaced(text, "depth = [4, 8]", "depth = 4\nspannorm_lambda = [0.5, 1.0]"),
                                  "placement = \"post\"\n\n[full]", "placement = \"pre\"\n\n[full]")));
  CHECK(lambda.reference_per_x.empty());
  CHECK(load_claim(write_file("ref_full.toml", text), true).reference->samples == 8);
  // The swept key may be given one value (the reference is then that one config at every point: "Pre-LN and
  // Post-LN, each against Mix-LN"), not a list; samples may not change, nor a per-layer claim have one.
  const ClaimSpec fixed = load_claim(
      write_file("ref_fixed.toml", replaced(text, "placement = \"post\"", "placement = \"mix\"\ndepth = 6")));
  CHECK(fixed.reference->depth == 6);
  CHECK(fixed.reference->placement == normsim::vocab::Placement::mix);
  CHECK(fixed.reference_per_x.empty());
  CHECK(error_of(replaced(text, "placement = \"post\"", "depth = [4, 6]")).find("key 'reference.depth'") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "placement = \"post\"", "samples = 3")).find("key 'reference.samples'") !=
        std::string::npos);
  CHECK(error_of(replaced(text, "depth = [4, 8]", "depth = 4")).find("key 'reference'") != std::string::npos);

  // y - y_ref per sample: synthetic records, act_sq = 2 + s at the last layer, the reference 1 + s.
  const int act = normsim::sim::metric_id("act_sq");
  const auto record = [&](double last) {
    normsim::sim::SampleRecord r;
    r.values.resize(normsim::sim::metric_table().size());
    r.values[std::size_t(act)] = {1.0, last};
    return r;
  };
  Measurement m;
  m.y = {{2.0, 3.0}, {3.0, 4.0}};
  m.meanfield = {2.0, std::nullopt};
  subtract_reference(c, {record(1.0), record(2.0)}, m);
  CHECK(m.y[0] == std::vector<double>{1.0, 2.0});
  CHECK(m.y[1] == std::vector<double>{1.0, 2.0});
  CHECK(!m.meanfield[1]);
}

// reduce = "logrange": ln(max / min) of the series over `layers`, its non-finite entries skipped; 0 iff
// uniform. Read through subtract_reference, which reduces the reference's series as the claim says.
TEST_CASE("reduce logrange: how far a series is from uniform", "[check][measure]") {
  const std::string text = replaced(replaced(replaced(kGood, "kind = \"powerlaw\"", "kind = \"bound\""),
                                             "layer = \"last\"", "reduce = \"logrange\""),
                                    "[full]", "[reference]\nplacement = \"post\"\n\n[full]");
  ClaimSpec c = load_claim(write_file("logrange.toml", text));
  CHECK(c.reduce == "logrange");
  const int act = normsim::sim::metric_id("act_sq");
  normsim::sim::SampleRecord r;
  r.values.resize(normsim::sim::metric_table().size());
  r.values[std::size_t(act)] = {1.0, 4.0, 2.0, std::nan("")};
  Measurement m;
  m.y = {{0.0}};
  subtract_reference(c, {r}, m);
  CHECK(m.y[0][0] == Approx(-std::log(4.0)));
  c.layers = "1:3";  // 4 and 2
  m.y = {{0.0}};
  subtract_reference(c, {r}, m);
  CHECK(m.y[0][0] == Approx(-std::log(2.0)));
  CHECK(error_of(replaced(text, "\"logrange\"", "\"range\"")).find("\"logrange\"") != std::string::npos);
}

namespace {

std::string normalized_space(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const bool space = ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : ch;
  }
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

// Issue 24 5(b): a claim's sample count is fixed before its verdict is read. preregistered_samples.csv holds
// the count each claim was first judged at; a claim run at another count must record every look (`looks`,
// starting at the registered count), which widens its intervals (Bonferroni over looks). A new claim is
// registered when it is written, before it is run.
TEST_CASE("every claim's samples are its registered count or a recorded sequential look", "[check][claims]") {
  const fs::path dir = fs::path(NORMSIM_SOURCE_DIR) / "experiments" / "claims";
  std::ifstream csv(dir / "preregistered_samples.csv");
  std::string line;
  std::getline(csv, line);
  REQUIRE(line == "id,samples");
  std::map<std::string, int> registered;
  while (std::getline(csv, line))
    if (const auto comma = line.find(','); comma != std::string::npos)
      registered[line.substr(0, comma)] = std::stoi(line.substr(comma + 1));
  for (const auto& c : load_claims(dir)) {
    INFO(c.file);
    REQUIRE(registered.count(c.id) == 1);
    const int samples = c.grid.configs.front().samples;
    if (c.looks.empty()) {
      CHECK(samples == registered[c.id]);
    } else {
      CHECK(c.looks.front() == registered[c.id]);
      CHECK(c.looks.back() == samples);
      CHECK(c.confidence == Approx(1 - 0.05 / double(c.looks.size())));
    }
  }
}

// Issue 24: every claim quotes the words it tests; a self claim's quote is theory.md's or theory_notes.md's
// own text (whitespace aside), so a derivation is never attributed to a paper.
TEST_CASE("every claim quotes its words; a self claim quotes the project's theory verbatim",
          "[check][claims]") {
  const fs::path root(NORMSIM_SOURCE_DIR);
  const std::string docs = normalized_space(read_text(root / "docs" / "theory.md")) + "\n" +
                           normalized_space(read_text(root / "docs" / "theory_notes.md"));
  int self = 0;
  for (const auto& c : load_claims(root / "experiments" / "claims")) {
    INFO(c.file);
    CHECK(c.quote.size() >= 20);
    if (c.kind == ClaimKind::reading) CHECK(!c.reading_of.empty());
    if (c.kind != ClaimKind::self) continue;
    ++self;
    CHECK(docs.find(normalized_space(c.quote)) != std::string::npos);
  }
  CHECK(self >= 20);
}

// Issue 25 3: a claim whose every sample gives a NaN statistic is "no finite measurement" and the check
// exits 1 naming it (it was "inconclusive, more samples would decide" with n = 0, exit 0).
TEST_CASE("check_command: a claim with no finite measurement exits 1", "[check][cli]") {
  const fs::path dir = fs::temp_directory_path() / "normsim_check_nanclaims";
  const fs::path out = fs::temp_directory_path() / "normsim_check_nanout";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::remove_all(out);
  std::ofstream(dir / "nan.toml") << replaced(
      replaced(kGood, "placement = \"pre\"", "placement = \"custom\"\nblock = \"x + F(x)/0\""), "width = 32",
      "width = 16");
  CHECK(check_command({"--claims", dir.string(), "--out", out.string(), "--quiet", "--no-plots", "--threads",
                       "1", "--backend", "cpu"}) == 1);
  std::ifstream verdicts(out / "verdicts.json");
  const std::string text(std::istreambuf_iterator<char>(verdicts), {});
  CHECK(text.find("\"verdict\": \"no finite measurement\"") != std::string::npos);
}

// Issue 25 9: claim files that were accepted although wrong or meaningless.
TEST_CASE("claim files: the validations a claim's meaning needs", "[check][claims]") {
  CHECK_THAT(error_of(replaced(kGood, "[full]", "[figure]\nkind = \"pie\"\n\n[full]")),
             Catch::Contains("key 'figure.kind': unknown figure kind 'pie'"));
  CHECK_THAT(error_of(replaced(kGood, "rel_tolerance = 0.1", "rel_tolerance = 0.1\ntolerance = 0.05")),
             Catch::Contains("key 'prediction.rel_tolerance': give tolerance or rel_tolerance, not both"));
  CHECK_THAT(error_of(replaced(kGood, "rel_tolerance = 0.1", "rel_tolerance = 0.1\nlower = 0.2")),
             Catch::Contains("give a tolerance around value, or lower/upper, not both"));
  // [full] is checked without --full: a typo there is found on the first run, at its line.
  CHECK_THAT(error_of(replaced(kGood, "samples = 8", "sampels = 8")),
             Catch::Contains("unknown key 'sampels'"));
  // layer may be an integer, as "3" is.
  const ClaimSpec three =
      load_claim(write_file("three.toml", replaced(kGood, "layer = \"last\"", "layer = 3")));
  CHECK(three.layer == "3");
  const fs::path empty = fs::temp_directory_path() / "normsim_check_noclaims";
  fs::remove_all(empty);
  fs::create_directories(empty);
  CHECK_THROWS_WITH(load_claims(empty), Catch::Contains("no claim files"));
  CHECK(check_command({"--claims", empty.string(), "--quiet", "--no-plots"}) == 2);
}

// Issue 25 11-12: `normsim check` holds OUT while it runs (a second check is refused, naming the first),
// writes its files all or none, and leaves in claims/ exactly this check's claims.
TEST_CASE("check_command: OUT locked while written, no stale claim folder", "[check][cli]") {
  const fs::path dir = fs::temp_directory_path() / "normsim_check_lockclaims";
  const fs::path out = fs::temp_directory_path() / "normsim_check_lockout";
  fs::remove_all(dir);
  fs::remove_all(out);
  fs::create_directories(dir);
  std::ofstream(dir / "a.toml") << replaced(kGood, "id = \"tiny\"", "id = \"a\"");
  std::ofstream(dir / "b.toml") << replaced(kGood, "id = \"tiny\"", "id = \"b\"");
  const std::vector<std::string> common = {"--claims",   dir.string(), "--out", out.string(), "--quiet",
                                           "--no-plots", "--threads",  "1",     "--backend",  "cpu"};
  std::vector<std::string> both = common, only_a = common;
  only_a.push_back("a");
  only_a.push_back("--force");  // OUT holds the first check's results: replaced only when asked
  {
    fs::create_directories(out);
    const normsim::sim::OutLock held(out);  // another check is writing OUT
    CHECK(check_command(both) != 0);
    CHECK_FALSE(fs::exists(out / "verdicts.json"));
  }
  CHECK((check_command(both) == 0));
  CHECK(fs::is_directory(out / "claims" / "b"));
  CHECK((check_command(only_a) == 0));
  CHECK(fs::is_directory(out / "claims" / "a"));
  CHECK_FALSE(fs::exists(out / "claims" / "b"));  // the earlier claim set's folder is gone
  for (const auto& e : fs::directory_iterator(out))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

// Issue 28 item 5: a claim at a training step. sweep.steps = T runs steps 0 .. T and [measure] step = s reads
// each sample's record of step s, so the statistic is the backend's own value at that step (compared exactly:
// the same config and seed give the same numbers). The mean field is the network at init: none at s > 0.
TEST_CASE("a claim at a training step reads each sample's record of that step", "[check][claims][steps]") {
  const std::string text =
      replaced(replaced(replaced(kGood, "samples = 2\n", "samples = 2\nsteps = 2\nupdate = \"adam\"\n"),
                        "layer = \"last\"", "layer = \"last\"\nstep = 2"),
               "metric = \"act_sq\"", "metric = \"act_mean_abs\"");
  const ClaimSpec c = load_claim(write_file("steps.toml", text));
  CHECK(c.step == 2);
  normsim::sim::CpuBackend backend(1);
  const Measurement m = measure(c, backend);
  const int metric = normsim::sim::metric_id("act_mean_abs");
  REQUIRE(m.y.size() == 2);
  for (std::size_t i = 0; i < c.grid.configs.size(); ++i) {
    const auto run = backend.run(c.grid.configs[i], std::vector<int>{0, 1});
    REQUIRE(run.size() == 2 * 3);  // samples x steps 0 .. 2
    for (std::size_t s = 0; s < 2; ++s) {
      const auto& at_two = run[s * 3 + 2].values[std::size_t(metric)];
      const auto& at_zero = run[s * 3].values[std::size_t(metric)];
      CHECK(m.y[s][i] == at_two.back());
      CHECK(at_two.back() != at_zero.back());  // two Adam steps moved the stream
    }
    CHECK(!m.meanfield[i]);
  }
  // The step is named (steps 0 and T are different claims) and lies in 0 .. steps.
  CHECK_THAT(error_of(replaced(text, "\nstep = 2", "")), Catch::Contains("bad.toml:14: key 'measure.step'"));
  CHECK_THAT(error_of(replaced(text, "step = 2", "step = 3")), Catch::Contains("key 'measure.step'"));
  CHECK_THAT(error_of(replaced(text, "step = 2", "step = -1")), Catch::Contains("key 'measure.step'"));
}

// A claim about training (testable_at_init = false) read at a training step is judged at that step, and a
// check folder whose claims are all read at steps > 0 (no step-0 rows in summary.csv) still loads for its
// claim figures (claims_only), while a plot of its step 0 is still refused.
TEST_CASE("check_command judges a claim at a training step", "[check][cli][steps]") {
  const fs::path dir = fs::temp_directory_path() / ("normsim_check_stepclaims." + std::to_string(::getpid()));
  const fs::path out = fs::temp_directory_path() / ("normsim_check_stepout." + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::remove_all(out);
  std::ofstream(dir / "step.toml") << replaced(
      replaced(replaced(kGood, "samples = 2\n", "samples = 2\nsteps = 2\nupdate = \"adam\"\n"),
               "layer = \"last\"", "layer = \"last\"\nstep = 2"),
      "testable_at_init = true", "testable_at_init = false");
  const int rc = check_command({"--claims", dir.string(), "--out", out.string(), "--quiet", "--no-plots",
                                "--threads", "1", "--backend", "cpu"});
  CHECK((rc == 0 || rc == 1));
  std::ifstream verdicts(out / "verdicts.json");
  const auto v = nlohmann::json::parse(verdicts);
  CHECK(v.at(0).at("verdict") != "not testable at init");
  CHECK(v.at(0).at("meanfield").is_null());                        // the mean field is the network at init
  const auto folder = normsim::plots::load_results(out, 0, true);  // as `normsim check` draws its figures
  CHECK_THROWS(normsim::plots::load_results(out));                 // a plot of step 0 finds no rows there
  CHECK(folder.summary.empty());                                   // its rows are at step 2
  CHECK(folder.has_verdicts);
  fs::remove_all(dir);
  fs::remove_all(out);
}
