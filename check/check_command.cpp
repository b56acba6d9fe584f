// The `normsim check` command (see check_command.hpp).
#include "check/check_command.hpp"

#include <omp.h>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "check/claim.hpp"
#include "check/evaluate.hpp"
#include "check/measure.hpp"
#include "check/report.hpp"
#include "sim/backend.hpp"
#ifdef NORMSIM_CHECK_HAVE_PLOTS
#include "plots/render_folder.hpp"
#endif

#ifndef NORMSIM_CLAIMS_DIR
#define NORMSIM_CLAIMS_DIR "experiments/claims"
#endif

namespace normsim::check {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHelp = R"(Usage: normsim check [CLAIM ...] [options]

Tests the claims of experiments/claims/*.toml (one file per claim: the statement, its source, a small
simulation sweep, the statistic and what counts as agreement) against the simulator, and writes
  OUT/report.md          one row per claim: predicted, measured [95% CI], verdict, figure
  OUT/verdicts.json      the same as data (docs/claims.md lists the fields)
  OUT/claims/<id>/       data.csv (x,measured,se,predicted) and summary.csv of the claim's runs
  OUT/figures/           claim_<id>.png, drawn by the plots library
With CLAIM ids, only those claims run.

Options:
  --full               use each claim's larger [full] sweep
  --out DIR            results folder (default out/check); existing files there are replaced
  --claims DIR         folder of claim files (default experiments/claims)
  --threads N          CPU threads (default 0: all cores)
  --backend NAME       auto (default) | cpu | cuda
  --quiet              no progress lines
  --no-plots           do not draw the figures
  --list               list the claims and exit
  -h, --help           this help

Exit status: 0 every self claim supported or undecided; 1 a self claim refuted (theory and simulator
disagree: a bug); 2 usage error or malformed claim file. Refuted literature claims are findings.
)";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::vector<std::string> ids;
  bool full = false, quiet = false, plots = true, list = false, help = false;
  fs::path out = "out/check", claims;
  int threads = 0;
  std::string backend = "auto";
};

Options parse(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](const std::string& name) -> std::string {
      if (a.starts_with(name + "=")) return a.substr(name.size() + 1);
      if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
      return args[++i];
    };
    const auto is = [&](const std::string& name) { return a == name || a.starts_with(name + "="); };
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--full") {
      o.full = true;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--no-plots") {
      o.plots = false;
    } else if (a == "--list") {
      o.list = true;
    } else if (is("--out")) {
      o.out = value("--out");
    } else if (is("--claims")) {
      o.claims = value("--claims");
    } else if (is("--backend")) {
      o.backend = value("--backend");
      if (o.backend != "auto" && o.backend != "cpu" && o.backend != "cuda")
        throw UsageError("--backend " + o.backend + ": expected auto, cpu or cuda");
    } else if (is("--threads")) {
      const std::string v = value("--threads");
      std::size_t used = 0;
      try {
        o.threads = std::stoi(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != v.size() || o.threads < 0)
        throw UsageError("--threads " + v + ": expected an integer >= 0");
    } else if (a.starts_with("-")) {
      throw UsageError("unknown option '" + a + "' (normsim check --help)");
    } else {
      o.ids.push_back(a);
    }
  }
  return o;
}

// The claims folder: as given, else ./experiments/claims, else the source tree's.
fs::path claims_dir(const Options& o) {
  if (!o.claims.empty()) return o.claims;
  if (fs::is_directory("experiments/claims")) return "experiments/claims";
  return NORMSIM_CLAIMS_DIR;
}

int run(const Options& o) {
  std::vector<ClaimSpec> claims = load_claims(claims_dir(o), o.ids, o.full);
  if (o.list) {
    for (const auto& c : claims)
      std::cout << c.id << " [" << to_string(c.kind) << "] " << c.statement << "\n";
    return 0;
  }
  auto backend = sim::make_backend(o.backend, o.threads);
  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  const auto start = std::chrono::steady_clock::now();
  std::vector<CheckedClaim> checked;
  int self_refuted = 0;
  for (auto& spec : claims) {
    const auto t0 = std::chrono::steady_clock::now();
    CheckedClaim c{std::move(spec), {}, {}, 0};
    c.measurement = measure(c.spec, *backend);
    c.result = evaluate(c.spec, c.measurement);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const Verdict v = c.result.decision.verdict;
    if (c.spec.kind == ClaimKind::self && v == Verdict::refuted) ++self_refuted;
    if (!o.quiet)
      std::cerr << "normsim check: " << c.spec.id << ": " << to_string(v) << " (measured "
                << c.result.estimate.value << " [" << c.result.estimate.low << ", " << c.result.estimate.high
                << "], predicted "
                << (c.result.predicted ? std::to_string(*c.result.predicted) : std::string("n/a")) << ", "
                << c.seconds << " s)\n";
    checked.push_back(std::move(c));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_check_results(o.out, checked, o.full, backend->name(), threads, seconds);
  if (o.plots) {
#ifdef NORMSIM_CHECK_HAVE_PLOTS
    // Figures are a convenience on top of the verdicts: failing to draw them is a warning. Only the claim
    // figures are drawn (claims_only): the others would be a profile of every one of the check's ~100
    // configurations (hundreds of figures, minutes of gnuplot); `normsim plot OUT` still draws them.
    try {
      plots::PlotOptions options;
      options.quiet = o.quiet;
      options.formats = {"png"};
      options.claims_only = true;
      options.report_markdown = false;  // report.md is check's own; plots adds report.html
      plots::render_folder(o.out, options);
    } catch (const std::exception& e) {
      std::cerr << "normsim check: warning: verdicts written, figures not drawn: " << e.what() << "\n";
    }
#else
    if (!o.quiet)
      std::cerr
          << "normsim check: this build has no plots/; figures/claim_<id>.png are not drawn (normsim plot "
          << o.out.string() << " draws them from claims/<id>/data.csv)\n";
#endif
  }
  if (!o.quiet)
    std::cerr << "normsim check: " << checked.size() << " claims in " << seconds << " s; wrote "
              << (o.out / "report.md").string() << " and verdicts.json\n";
  if (self_refuted > 0) {
    std::cerr << "normsim check: " << self_refuted
              << " self claim(s) refuted: the simulator and the theory disagree (see report.md)\n";
    return 1;
  }
  return 0;
}

}  // namespace

int check_command(const std::vector<std::string>& args) {
  try {
    const Options o = parse(args);
    if (o.help) {
      std::cout << kHelp;
      return 0;
    }
    return run(o);
  } catch (const UsageError& e) {
    std::cerr << "normsim check: " << e.what() << "\n";
    return 2;
  } catch (const ClaimError& e) {
    std::cerr << e.what() << "\n";  // "FILE:LINE: key 'K': why"
    return 2;
  } catch (const sim::BackendUnavailable& e) {
    std::cerr << "normsim check: backend unavailable: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace normsim::check
