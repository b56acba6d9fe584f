// The `normsim check` command (see check_command.hpp).
#include "app/check_command.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "check/check_out.hpp"
#include "check/claim.hpp"
#include "check/evaluate.hpp"
#include "check/measure.hpp"
#include "check/report.hpp"
#include "cli/command_line.hpp"
#include "plots/render_folder.hpp"
#include "sim/backend.hpp"
#include "sim/run/sweep.hpp"

#ifndef NORMSIM_CLAIMS_DIR
#define NORMSIM_CLAIMS_DIR "experiments/claims"
#endif

namespace normsim::app {

using namespace normsim::check;
namespace fs = std::filesystem;

namespace {

constexpr const char* kCheckDescription =
    R"(Tests the claims of experiments/claims/*.toml (one file per claim: the statement, its source, a small
simulation sweep, the statistic and what counts as agreement) against the simulator, and writes
  OUT/report.md          one row per claim: predicted, measured [95% CI], verdict, figure
  OUT/verdicts.json      the same as data (docs/claims.md lists the fields)
  OUT/claims/<id>/       data.csv (x,measured,se,predicted) and summary.csv of the claim's runs
  OUT/figures/           claim_<id>.pdf/.svg/.png, drawn by the plots library
With CLAIM ids, only those claims run.)";

constexpr const char* kExitStatus =
    R"(Exit status: 0 every self claim supported or undecided; 1 a self claim refuted (theory and simulator
disagree: a bug), or a claim with no finite measurement; 2 usage error or malformed claim file. Refuted literature claims are findings.)";

struct Options {
  std::vector<std::string> ids, formats;
  bool full = false, no_plots = false, list = false, force = false;
  cli::Verbosity verbosity;
  fs::path out = "out/check", claims;
  int threads = 0;
  vocab::BackendChoice backend = vocab::BackendChoice::auto_;
};

std::unique_ptr<CLI::App> check_parser(Options& o) {
  auto app = cli::make_command("check", kCheckDescription);
  app->footer(kExitStatus);
  app->add_option("CLAIM", o.ids, "only these claims (default: all)")->type_name("");
  app->add_flag("--full", o.full, "use each claim's larger [full] sweep");
  app->add_option("--out", o.out, "results folder (default out/check; must be empty unless --force)")
      ->type_name("DIR");
  app->add_flag("--force", o.force,
                "replace an earlier check's results in OUT (report, verdicts, claims/, figures/)");
  app->add_option("--claims", o.claims, "folder of claim files (default experiments/claims)")
      ->type_name("DIR");
  cli::add_backend_options(*app, o.backend, o.threads, sim::kMaxThreads);
  app->add_flag("--no-plots", o.no_plots, "do not draw the figures");
  app->add_option("--format", o.formats, "claim figures in any of pdf, svg, png (default: all three)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("F[,F...]");
  app->add_flag("--list", o.list, "list the claims and exit (the same as `normsim list claims`)");
  cli::add_verbosity(*app, o.verbosity);
  return app;
}

// The claims folder: as given, else ./experiments/claims, else the source tree's.
fs::path claims_dir(const Options& o) {
  if (!o.claims.empty()) return o.claims;
  if (fs::is_directory("experiments/claims")) return "experiments/claims";
  return NORMSIM_CLAIMS_DIR;
}

void print_claims(std::ostream& os, const std::vector<ClaimSpec>& claims, bool markdown) {
  if (markdown) os << "### claims\n\n| id | kind | statement |\n|---|---|---|\n";
  for (const auto& c : claims) {
    if (markdown)
      os << "| `" << c.id << "` | " << to_string(c.kind) << " | " << c.statement << " |\n";
    else
      os << c.id << " [" << to_string(c.kind) << "] " << c.statement << "\n";
  }
}

int run(const Options& o) {
  std::vector<ClaimSpec> claims = load_claims(claims_dir(o), o.ids, o.full);
  if (o.list) {
    print_claims(std::cout, claims, false);
    return 0;
  }
  auto backend = sim::make_backend(o.backend, o.threads);
  // OUT is this check's until it ends: a second check into it is refused, naming this one.
  const auto lock = lock_check_out(o.out, o.force);
  const int threads = sim::resolved_threads(o.threads);
  const auto start = std::chrono::steady_clock::now();
  std::vector<CheckedClaim> checked;
  int self_refuted = 0;
  std::vector<std::string> unmeasured;  // claims whose simulation gave no finite statistic
  std::unique_ptr<sim::Backend> cpu;    // --backend auto: runs the claims the chosen device backend refuses
  for (auto& spec : claims) {
    const auto t0 = std::chrono::steady_clock::now();
    CheckedClaim c{std::move(spec), {}, {}, 0};
    try {
      c.measurement = measure(c.spec, *backend);
    } catch (const sim::BackendUnavailable& e) {  // a feature the device backend lacks (update, Jacobians)
      if (o.backend != vocab::BackendChoice::auto_ || backend->name() == "cpu") throw;
      if (!cpu) cpu = sim::make_backend(vocab::BackendChoice::cpu, o.threads);
      if (!o.verbosity.quiet)
        std::cerr << "normsim check: " << c.spec.id << ": on the CPU backend (" << e.what() << ")\n";
      c.measurement = measure(c.spec, *cpu);
    }
    c.result = evaluate(c.spec, c.measurement);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Verdict v = c.result.decision.verdict;
    if (c.spec.kind == ClaimKind::self && v == Verdict::refuted) ++self_refuted;
    if (v == Verdict::no_measurement) unmeasured.push_back(c.spec.id);
    if (!o.verbosity.quiet)
      std::cerr << "normsim check: " << c.spec.id << ": "
                << verdict_words(v, c.spec.kind == ClaimKind::reading) << " (measured "
                << c.result.estimate.value << " [" << c.result.estimate.low << ", " << c.result.estimate.high
                << "], predicted "
                << (c.result.predicted ? std::to_string(*c.result.predicted) : std::string("n/a")) << ", "
                << c.seconds << " s)\n";
    checked.push_back(std::move(c));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // report.md links figures/claim_<id>.png only when they are drawn.
  write_check_results(o.out, checked, o.full, *backend, threads, seconds, !o.no_plots);
  if (!o.no_plots) {
    // Figures are a convenience on top of the verdicts: failing to draw them is a warning. Only the claim
    // figures are drawn (claims_only): the others would be a profile of every one of the check's ~100
    // configurations (hundreds of figures, minutes of gnuplot); `normsim plot OUT` still draws them.
    try {
      plots::PlotOptions options;
      options.quiet = o.verbosity.quiet;
      options.verbose = o.verbosity.verbose;
      if (!o.formats.empty()) options.formats = o.formats;  // default: PDF, SVG and PNG, as `normsim plot`
      options.claims_only = true;
      options.report_markdown = false;  // report.md is check's own; plots adds report.html
      plots::render_folder(o.out, options);
    } catch (const std::exception& e) {
      std::cerr << "normsim check: warning: verdicts written, figures not drawn: " << e.what() << "\n";
    }
  }
  if (!o.verbosity.quiet)
    std::cerr << "normsim check: " << checked.size() << " claims in " << seconds << " s; wrote "
              << (o.out / "report.md").string() << " and verdicts.json\n";
  for (const auto& id : unmeasured)
    std::cerr << "normsim check: " << id
              << ": no finite measurement (every sample's statistic is NaN or Inf: see claims/" << id
              << "/summary.csv and the claim's [sweep])\n";
  if (!unmeasured.empty()) return 1;
  if (self_refuted > 0) {
    std::cerr << "normsim check: " << self_refuted
              << " self claim(s) refuted: the simulator and the theory disagree (see report.md)\n";
    return 1;
  }
  return 0;
}

}  // namespace

void list_claims(std::ostream& os, bool markdown) {
  if (!markdown) os << "claims:\n";
  print_claims(os, load_claims(claims_dir(Options{})), markdown);
}

int check_command(const std::vector<std::string>& args) {
  return cli::exit_status<ClaimError>("check", [&] {
    Options o;
    try {
      return cli::parse(*check_parser(o), args) ? run(o) : 0;
    } catch (const sim::SweepError& e) {
      throw cli::InputError(e.what());  // a refused OUT (not empty, locked by another check): exit 2
    }
  });
}

}  // namespace normsim::app
