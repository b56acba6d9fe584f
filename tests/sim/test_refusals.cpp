// Issue 15: inputs that parse but cannot run, do not apply, or are not files are refused before anything
// is written (exit 2, OUT left exactly as it was), with the keys and figures named.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/key_relevance.hpp"
#include "sim/run/sweep.hpp"
#include "sim/unit_plan.hpp"
#include "test_util.hpp"

using namespace normsim::test;

namespace {
// Runs `normsim run CONFIG --out OUT EXTRA` and checks it is refused with exit 2, leaving no OUT.
CliResult refused(const ScratchDir& dir, const std::string& config, const std::string& extra = "") {
  const CliResult r =
      run_cli("run " + quote(config) + " --out " + quote((dir / "out").string()) + " " + extra, dir);
  CHECK(r.status == 2);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
  return r;
}
}  // namespace

TEST_CASE("sizes that cannot fit are refused with the keys and the figures") {
  ScratchDir dir("huge");
  write_text(dir / "c.toml", "width = 40000\nmlp_ratio = 4\ndepth = 16\n");
  const CliResult r = refused(dir, (dir / "c.toml").string(), "--backend cpu");
  CHECK(r.err.find("width 40000") != std::string::npos);
  CHECK(r.err.find("GB of weights") != std::string::npos);
  CHECK(r.err.find("this machine has") != std::string::npos);
  // Past int or the draws' counter: refused by the config check itself, with its line.
  write_text(dir / "c.toml", "width = 256\nmlp_ratio = 134217728\n");
  CHECK(refused(dir, (dir / "c.toml").string()).err.find("c.toml:2: key 'mlp_ratio'") != std::string::npos);
  write_text(dir / "c.toml", "width = 1000000\ntokens = 100000\nsublayer = \"attention\"\n");
  CHECK(refused(dir, (dir / "c.toml").string()).err.find("2^34") != std::string::npos);
}

// nGPT renormalizes its matrices after every step (NVIDIA/ngpt train.py L394-408, L500), which the
// optimizer does not: a unit-norm matrix with steps is refused, naming the line of `steps`; an init rule
// other than unit, or unit without steps, runs.
TEST_CASE("unit-norm matrices are not trained: steps with init unit are refused") {
  ScratchDir dir("unitsteps");
  const std::string steps = "steps = 2\nupdate = \"adam\"\n";
  for (const std::string init : {"init = \"unit\"\n", "init_w2 = \"unit:1\"\n"}) {
    write_text(dir / "c.toml", "width = 8\ndepth = 2\n" + init + steps);
    const CliResult r = refused(dir, (dir / "c.toml").string());
    CHECK_THAT(r.err, Catch::Contains("c.toml:4: key 'steps': nGPT renormalizes"));
  }
  write_text(dir / "c.toml", "width = 8\ndepth = 2\ninit_w2 = \"fanin:1\"\n" + steps);
  const CliResult ran = run_cli("run " + quote((dir / "c.toml").string()) + " --out " +
                                    quote((dir / "out").string()) + " --quiet --no-plots",
                                dir);
  CHECK(ran.status == 0);
}

TEST_CASE("a folder, an empty file or a missing file is not a config") {
  ScratchDir dir("notfile");
  CHECK(refused(dir, dir.path().string()).err.find("is a folder") != std::string::npos);
  write_text(dir / "empty.toml", "# nothing\n\n");
  CHECK(refused(dir, (dir / "empty.toml").string()).err.find("sets no key") != std::string::npos);
  CHECK(refused(dir, (dir / "missing.toml").string()).err.find("cannot read") != std::string::npos);
}

TEST_CASE("keys that do not apply: a warning each, refused with --strict") {
  ScratchDir dir("unused");
  write_text(dir / "c.toml",
             "placement = \"pre\"\ndeepnorm_alpha = 2.0\nheads = 8\ninit_std = 0.5\ndepth = 2\nwidth = 8\n"
             "tokens = 2\nsamples = 1\n");
  const CliResult strict = refused(dir, (dir / "c.toml").string(), "--strict");
  for (const char* key : {":2: key 'deepnorm_alpha'", ":3: key 'heads'", ":4: key 'init_std'"})
    CHECK(strict.err.find(key) != std::string::npos);
  const CliResult warned = run_cli("run " + quote((dir / "c.toml").string()) + " --out " +
                                       quote((dir / "out").string()) + " --quiet --no-plots",
                                   dir);
  CHECK(warned.status == 0);
  CHECK(warned.err.find("warning: ") != std::string::npos);
  CHECK(warned.err.find("key 'deepnorm_alpha' has no effect") != std::string::npos);
  // A key that applies to one configuration of a sweep is not flagged.
  const auto grid =
      normsim::sim::parse_grid("placement = [\"pre\", \"deepnorm\"]\ndeepnorm_alpha = 2.0\n", "g");
  CHECK(grid.unused_keys.empty());
}

TEST_CASE("qk_norm is read by every attention except HybridNorm's, whose Q and K are normalized already") {
  using normsim::sim::why_key_unused;
  normsim::sim::Config c;
  c.sublayer = normsim::vocab::Sublayer::mlp;
  CHECK(why_key_unused("qk_norm", c).find("has no attention") != std::string::npos);
  c.sublayer = normsim::vocab::Sublayer::transformer;
  CHECK(why_key_unused("qk_norm", c).empty());
  CHECK(why_key_unused("qk_norm_scope", c).find("qk_norm = false") != std::string::npos);
  c.qk_norm = true;
  CHECK(why_key_unused("qk_norm_scope", c).empty());
  c.placement = normsim::vocab::Placement::hybridnorm;
  CHECK(why_key_unused("qk_norm", c).find("normalizes Q and K already") != std::string::npos);
  CHECK(why_key_unused("qk_norm_scope", c).find("normalizes Q and K already") != std::string::npos);
}

// attention_gate needs an attention; init_wga needs a gate, and with one it decides whether the init rule is
// still used when every other matrix is overridden (W_g follows init_wq unless init_wga is set).
TEST_CASE("attention_gate and init_wga are marked unused where they have no effect") {
  using normsim::sim::why_key_unused;
  normsim::sim::Config c;
  c.sublayer = normsim::vocab::Sublayer::mlp;
  CHECK(why_key_unused("attention_gate", c).find("has no attention") != std::string::npos);
  c.sublayer = normsim::vocab::Sublayer::transformer;
  CHECK(why_key_unused("attention_gate", c).empty());
  CHECK(why_key_unused("init_wga", c).find("no attention_gate") != std::string::npos);
  c.attention_gate = normsim::vocab::AttentionGate::headwise;
  CHECK(why_key_unused("init_wga", c).empty());
  c.init_w1 = c.init_w2 = c.init_wgate = c.init_wq = c.init_wk = c.init_wv = c.init_wo = "fixed:0.1";
  CHECK(why_key_unused("init_gain", c).find("no matrix") != std::string::npos);  // W_g follows init_wq
  c.init_wga = "xavier:1";
  CHECK(why_key_unused("init_gain", c).empty());
  c.init_wga = "fixed:0.1";
  c.init = normsim::vocab::Init::unit;  // "unit" reads init_gain too: its vectors' length
  CHECK(why_key_unused("init_gain", c).find("no matrix") != std::string::npos);  // every matrix overridden
  c.init_wo = "";
  CHECK(why_key_unused("init_gain", c).empty());
}

TEST_CASE("tf32 on the CPU backend is refused before OUT is touched") {
  ScratchDir dir("tf32");
  write_text(dir / "c.toml", "precision = \"tf32\"\ndepth = 2\n");
  CHECK(refused(dir, (dir / "c.toml").string(), "--backend cpu").err.find("key 'precision'") !=
        std::string::npos);
  // An OUT that existed stays exactly as it was.
  std::filesystem::create_directories(dir / "out");
  write_text(dir / "out" / "mine.txt", "x");
  const CliResult r = run_cli("run " + quote((dir / "c.toml").string()) + " --out " +
                                  quote((dir / "out").string()) + " --backend cpu --force",
                              dir);
  CHECK(r.status == 2);
  CHECK(read_text(dir / "out" / "mine.txt") == "x");
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "parts"));
}

TEST_CASE("all problems of a config are reported at once") {
  ScratchDir dir("all");
  write_text(dir / "c.toml",
             "sublayer = \"attention\"\nwidth = 16\nheads = [3, 5]\ndepth = 3\nplacement = \"b2t\"\n");
  const CliResult r = refused(dir, (dir / "c.toml").string());
  CHECK(r.err.find("3 does not divide width 16") != std::string::npos);
  CHECK(r.err.find("5 does not divide width 16") != std::string::npos);
  CHECK(r.err.find("needs it even") != std::string::npos);
}

TEST_CASE("a dry run prints the plan: units, memory per sample, estimated time; writes nothing") {
  ScratchDir dir("dry");
  write_text(dir / "c.toml", "width = [64, 40000]\ndepth = 4\n");
  const CliResult r = run_cli("run " + quote((dir / "c.toml").string()) + " --dry-run --backend cpu", dir);
  CHECK(r.status == 2);  // one configuration would be refused
  CHECK(r.out.find("CPU memory per sample") != std::string::npos);
  CHECK(r.out.find("estimated CPU time") != std::string::npos);
  CHECK(r.out.find("REFUSED") != std::string::npos);
}

TEST_CASE("the memory estimate counts weights as their sizes say") {
  normsim::sim::Config c;
  c.width = 100;
  c.mlp_ratio = 3;
  c.depth = 5;
  c.precision = normsim::vocab::Precision::float64;
  // One 100 x 300 matrix at a time (weights are redrawn in the backward), whatever the depth.
  CHECK(normsim::sim::cpu_sample_memory(c).weights == 100 * 300 * 8);
  c.depth = 500;
  CHECK(normsim::sim::cpu_sample_memory(c).weights == 100 * 300 * 8);
  CHECK(normsim::sim::human_bytes(16e12) == "16 TB");
}

// The CPU backend keeps a stack's weights for the backward only when all the running samples' stacks fit an
// eighth of the machine: W1 (64 x 2 matrices 512 x 2048 in float32, 512 MiB) on 2 threads in 24 GiB, not the
// 2048 x 8192 x depth 128 memory case (16 GiB each), nor W1 in 4 GiB.
TEST_CASE("weights are kept for the backward only within an eighth of the machine") {
  normsim::sim::Config c;
  c.width = 512;
  c.mlp_ratio = 4;
  c.depth = 64;
  c.tokens = 64;
  CHECK(normsim::sim::cpu_stack_weight_bytes(c) == 64.0 * 2 * 512 * 2048 * 4);
  const double gib = 1024.0 * 1024 * 1024;
  CHECK(normsim::sim::cpu_keeps_weights(c, 2, 24 * gib));
  CHECK_FALSE(normsim::sim::cpu_keeps_weights(c, 2, 4 * gib));
  c.width = 2048;
  c.depth = 128;
  CHECK_FALSE(normsim::sim::cpu_keeps_weights(c, 2, 24 * gib));
}

namespace {
// A device-like backend that lacks one feature: it refuses every config asking for an update.
class NoUpdateBackend final : public normsim::sim::Backend {
 public:
  std::string name() const override { return "fake"; }
  std::vector<normsim::sim::SampleRecord> run(const normsim::sim::Config&, std::span<const int>) override {
    return {};
  }
  std::string refusal(const normsim::sim::Config& c, int) const override {
    return c.update == normsim::vocab::Update::none ? "" : "key 'update': not on this backend";
  }
};
}  // namespace

// --backend auto picks the device backend only where it can run the whole grid; otherwise the CPU, saying
// why. An explicit choice is never overridden (the refusal then stops the run, exit 2).
TEST_CASE("backend auto falls back to the CPU for a grid the device backend refuses") {
  using namespace normsim::sim;
  const Grid plain = parse_grid("depth = 2\n", "plain.toml");
  const Grid stepped = parse_grid("depth = 2\nupdate = [\"none\", \"sgd\"]\n", "stepped.toml");
  std::string note;
  CHECK(backend_for_grid(std::make_unique<NoUpdateBackend>(), normsim::vocab::BackendChoice::auto_, plain, 0,
                         1, &note)
            ->name() == "fake");
  CHECK(note.empty());
  CHECK(backend_for_grid(std::make_unique<NoUpdateBackend>(), normsim::vocab::BackendChoice::auto_, stepped,
                         0, 1, &note)
            ->name() == "cpu");
  CHECK(note.find("cannot run 1 of 2 configurations") != std::string::npos);
  CHECK(note.find("key 'update'") != std::string::npos);
  note.clear();
  CHECK(backend_for_grid(std::make_unique<NoUpdateBackend>(), normsim::vocab::BackendChoice::cuda, stepped, 0,
                         1, &note)
            ->name() == "fake");
  CHECK(note.empty());
  const NoUpdateBackend fake;
  CHECK_THROWS_WITH(
      check_backend_can_run(stepped, fake, 0),
      Catch::Contains("stepped.toml: the fake backend cannot run 1 of 2 configurations; nothing "
                      "was written:\n  config 1"));
}

// Issue 30 item 7: the `recompute` key is the CPU's too. true redraws the weights in the backward, false
// keeps every one (refused by name where that cannot fit), auto keeps them when they take at most an eighth
// of memory; Philox redraws the same weights, so the records are the same bits whichever it is.
TEST_CASE("recompute on the CPU: keep or redraw as asked, the same numbers either way") {
  using namespace normsim::sim;
  using normsim::vocab::Recompute;
  Config c;
  c.width = 64, c.tokens = 8, c.depth = 4, c.samples = 2, c.seed = 3;
  c.recompute = Recompute::yes;
  CHECK_FALSE(cpu_keeps_weights(c, 1, 1e12));
  c.recompute = Recompute::no;
  CHECK(cpu_keeps_weights(c, 1, 1e12));
  c.recompute = Recompute::auto_;
  CHECK(cpu_keeps_weights(c, 1, 1e12));
  // A machine that holds the activations but not every weight besides: false is refused, naming the key.
  const double activations = cpu_sample_memory(c).total();
  const double machine = activations + cpu_stack_weight_bytes(c) / 2;
  c.recompute = Recompute::no;
  CHECK_THAT(cpu_memory_refusal(c, 1, machine), Catch::Contains("key 'recompute': false keeps every weight"));
  c.recompute = Recompute::auto_;
  CHECK(cpu_memory_refusal(c, 1, machine).empty());
  const std::vector<int> samples = {0, 1};
  std::vector<std::vector<SampleRecord>> runs;
  for (const Recompute r : {Recompute::yes, Recompute::no, Recompute::auto_}) {
    c.recompute = r;
    runs.push_back(CpuBackend(2).run(c, samples));
  }
  for (std::size_t s = 0; s < samples.size(); ++s) {
    REQUIRE(runs[0][s].values.size() == runs[1][s].values.size());
    for (std::size_t m = 0; m < runs[0][s].values.size(); ++m) {
      for (std::size_t i = 0; i < runs[0][s].values[m].size(); ++i) {
        const double a = runs[0][s].values[m][i], b = runs[1][s].values[m][i], d = runs[2][s].values[m][i];
        if (std::isnan(a)) {
          CHECK((std::isnan(b) && std::isnan(d)));
        } else {
          CHECK(a == b);
          CHECK(a == d);
        }
      }
    }
  }
}

// A parametrization's rules may read any numeric config key: nanogpt_sp's and megatron_depth_mup's std rules
// read init_std, which the default init ("fanin") does not; the key then has an effect and is not warned
// about (under --strict it was refused).
TEST_CASE("a key a parametrization rule reads is not marked unused") {
  using normsim::sim::why_key_unused;
  normsim::sim::Config c;
  CHECK(why_key_unused("init_std", c).find("\"fixed\" rule") != std::string::npos);
  c.parametrization = "nanogpt_sp";
  CHECK(why_key_unused("init_std", c).empty());
  c.parametrization = "custom";  // param_rules alone
  c.param_rules = "hidden: std = init_std / sqrt(m_N)";
  CHECK(why_key_unused("init_std", c).empty());
  c.param_rules = "hidden: std = 0.02";
  CHECK(why_key_unused("init_std", c).find("\"fixed\" rule") != std::string::npos);
}

// Adam's betas: unused when the update is not adam (said first, whatever the steps), or when the one Adam
// step of steps = 0 keeps no moments.
TEST_CASE("adam_beta1 and adam_beta2 say why they are unused") {
  using normsim::sim::why_key_unused;
  normsim::sim::Config c;
  c.update = normsim::vocab::Update::sgd;
  c.steps = 0;
  CHECK(why_key_unused("adam_beta2", c).find("is not adam") != std::string::npos);
  c.steps = 2;
  CHECK(why_key_unused("adam_beta1", c).find("is not adam") != std::string::npos);
  c.update = normsim::vocab::Update::adam;
  CHECK(why_key_unused("adam_beta2", c).empty());
  c.steps = 0;
  CHECK(why_key_unused("adam_beta2", c).find("steps = 0") != std::string::npos);
}
