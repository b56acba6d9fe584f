// The normsim command-line program: `run` a config file into a results folder, `list` what can be
// configured; `plot` a results folder (app/plot_command.cpp) and `check` the claims (app/check_command.cpp)
// are dispatched to their commands. The only place where errors become messages and exit statuses:
// 0 ok, 2 bad config or usage (the message names file, line and key), 1 runtime failure.
#include <unistd.h>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/check_command.hpp"
#include "app/coord_command.hpp"
#include "app/list_families.hpp"
#include "app/list_parametrizations.hpp"
#include "app/markdown.hpp"
#include "app/plot_command.hpp"
#include "app/run_plan.hpp"
#include "cli/command_line.hpp"
#include "meanfield_of/theory_overlay.hpp"
#include "sim/backend.hpp"
#include "sim/cpu/register.hpp"
#include "sim/metrics.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/config_schema.hpp"
#include "sim/run/results.hpp"
#include "sim/run/sweep.hpp"
#if defined(NORMSIM_HAVE_CUDA) || defined(NORMSIM_HAVE_REFERENCE)
#include "gpu/register.hpp"
#endif
#ifdef NORMSIM_HAVE_MPI
#include "mpi/launch.hpp"
#include "mpi/run_distributed.hpp"
#endif

namespace {

using namespace normsim::sim;

constexpr const char* kMainHelp =
    R"(normsim: signal propagation through deep residual stacks at initialization.

Usage: normsim COMMAND [options]
  normsim run CONFIG --out OUT [options]   run every configuration of CONFIG into the folder OUT
  normsim list [WHAT] [--markdown]         what can be configured (keys, placements, metrics, ...) and claims
  normsim check [claim ...] [options]      theory vs simulation: a verdict for every claim
  normsim coord CONFIG --sweep width=... --out OUT
                                           a coordinate check: exponents in width or depth, predicted
  normsim plot OUT [options]               figures and a report from a results folder
  normsim --version                        version, git commit, CUDA, reference device and MPI support
  normsim COMMAND --help                   help on one command

Exit status: 0 ok, 2 bad config or usage, 1 runtime failure.
Config keys, grids and result files: experiments/README.md.
)";

constexpr const char* kRunDescription =
    R"(Runs every configuration of the TOML file CONFIG (keys given as lists are swept over their Cartesian
product, the first list varying slowest) and writes OUT/layers.csv, summary.csv, nonfinite.csv and
run.json with theory.csv (all or none), then the figures. Finished units of work are saved under OUT/parts/ as they
finish, so an interrupted run can be completed with --resume; OUT/parts/ is removed once the run finishes.)";

struct RunArgs {
  std::string config, out;
  normsim::vocab::BackendChoice backend = normsim::vocab::BackendChoice::auto_;
  std::vector<std::string> sets;
  SweepOptions options;
  normsim::cli::Verbosity verbosity;
  bool no_plots = false, dry_run = false, strict = false;
};

std::unique_ptr<CLI::App> run_parser(RunArgs& r) {
  auto app = normsim::cli::make_command("run", kRunDescription);
  app->add_option("CONFIG", r.config, "the TOML config file")->type_name("");
  app->add_option("--out", r.out, "results folder (created; must be empty unless --resume or --force)")
      ->type_name("OUT");
  app->add_option("--set", r.sets,
                  "override a key (repeatable); VALUE is a TOML value, a list sweeps the key: --set "
                  "depth=[8,16] --set placement=post --set 'init_w2=\"fixed:0.01\"'")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  app->add_flag(
      "--resume", r.options.resume,
      "continue an interrupted run in OUT (its grid must be the same; a finished one: nothing to do)");
  app->add_flag("--force", r.options.force,
                "discard earlier results in OUT (result files and OUT/parts/) and start over");
  normsim::cli::add_backend_options(*app, r.backend, r.options.threads, normsim::sim::kMaxThreads);
  app->add_option("--unit-samples", r.options.unit_samples,
                  "samples per unit of work (default 0: all samples of a config in one unit)")
      ->check(normsim::cli::count());
  app->add_flag("--dry-run", r.dry_run,
                "check the config, print the grid and its plan (memory, time); write nothing");
  app->add_flag("--strict", r.strict, "refuse keys that no configuration reads (default: a warning each)");
  app->add_flag("--no-plots", r.no_plots, "do not draw figures at the end");
  normsim::cli::add_verbosity(*app, r.verbosity);
  return app;
}

// Keys set but read by no configuration: a warning each, or (--strict) an error listing them all.
void report_unused_keys(const Grid& grid, bool strict) {
  if (strict && !grid.unused_keys.empty()) {
    std::string all;
    for (const auto& w : grid.unused_keys) all += (all.empty() ? "" : "\n") + w;
    throw ConfigError(all);
  }
  for (const auto& w : grid.unused_keys) std::cerr << kRunPrefix << "warning: " << w << "\n";
}

// Figures from a results folder, with run's -q/-v: `normsim plot OUT`'s exit status.
int run_plots(const std::string& out, const normsim::cli::Verbosity& verbosity) {
  std::vector<std::string> args = {out};
  if (verbosity.quiet) args.emplace_back("--quiet");
  if (verbosity.verbose) args.emplace_back("--verbose");
  return normsim::app::plot_command(args);
}

int cmd_run(const std::vector<std::string>& args) {
  RunArgs r;
  if (!normsim::cli::parse(*run_parser(r), args)) return 0;
  if (r.config.empty()) throw normsim::cli::UsageError("no config file");
  const auto& [config, out, backend, sets, options_given, verbosity, no_plots, dry_run, strict] = r;
  SweepOptions options = options_given;
  options.verbose = verbosity.verbose;
  const bool quiet = verbosity.quiet;
  const Grid grid = load_grid(config, sets);
  report_unused_keys(grid, strict);
  if (!dry_run && out.empty()) throw normsim::cli::UsageError("no --out folder");
  const int unit_samples = std::max(options.unit_samples, 0);
  if (dry_run) {
    const auto engine = make_backend(backend, options.threads);
    return normsim::app::print_plan(std::cout, grid, *engine, unit_samples) ? 2 : 0;
  }
  options.out = out;
  options.progress_bar = !quiet && ::isatty(STDERR_FILENO);
  // The mean field of every configuration beside the results (OUT/theory.csv, and its NaN or Inf entries in
  // nonfinite.csv), for the figures' overlays: written with the other result files, all or none.
  std::vector<std::string> no_theory;  // configurations the mean field does not cover, and why
  options.extra_files = [&grid, &no_theory](const std::filesystem::path& stage) {
    normsim::meanfield_of::write_theory_csv(stage, grid, &no_theory);
  };

  SweepReport report;
  PreparedOut locked;  // OUT stays locked until theory.csv and the figures are written too
#ifdef NORMSIM_HAVE_MPI
  // mpi/ (docs/mpi.md): launched by mpirun/srun with several ranks, the units are shared among them. Rank 0
  // goes on to the summary line and the figures; the other ranks end here, with 0: failures throw on rank 0.
  if (normsim::mpi::launched_with_ranks()) {
    auto rank = normsim::mpi::run_distributed(grid, backend, options, std::cerr);
    if (!rank.root) return 0;
    report = rank.report;
    locked = std::move(rank.out);
  } else  // one process: the block below
#endif
  {
    // Everything that can refuse the run does so before OUT is touched.
    check_out(grid, options);
    std::string fallback;
    auto engine = make_backend(backend, options.threads, &fallback);
    // A machine without a CUDA device is the usual case, said only with --verbose; a device this build
    // cannot use is said always (issue 30 item 7).
    const bool no_device = fallback.rfind("no CUDA device", 0) == 0;
    if (!fallback.empty() && !quiet && (options.verbose || !no_device))
      std::cerr << kRunPrefix << "--backend auto runs on the CPU: " << fallback << "\n";
    options.threads = resolved_threads(options.threads);
    std::string refused;
    engine = backend_for_grid(std::move(engine), backend, grid, unit_samples, options.threads, &refused);
    if (!refused.empty() && !quiet)
      std::cerr << kRunPrefix << "--backend auto runs on the CPU: " << refused << "\n";
    check_backend_can_run(grid, *engine, unit_samples);
    options.backend = engine->name();  // a resume must run where the run started
    locked = lock_and_prepare_out(grid, options);
    report = run_prepared(grid, *engine, options, locked, std::cerr);
  }
  if (!quiet) {
    std::cerr << kRunPrefix << out << ": " << grid.configs.size() << " configurations, " << report.units_run
              << " units run";
    if (report.units_resumed) std::cerr << ", " << report.units_resumed << " resumed";
    if (report.nonfinite_samples) std::cerr << ", " << report.nonfinite_samples << " samples with NaN or Inf";
    std::cerr << "\n";
    if (!no_theory.empty())  // said, never silent: the figures then draw no mean field for them
      std::cerr << kRunPrefix << "no mean field (theory.csv) for " << no_theory.size() << " of "
                << grid.configs.size() << " configurations, e.g. " << no_theory.front() << "\n";
  }
  // The figures are a convenience on top of the results: failing to draw them (no gnuplot, say) is a
  // warning, and the run still succeeds.
  if (!no_plots)
    if (const int rc = run_plots(out, verbosity); rc > 0)
      std::cerr << kRunPrefix
                << "warning: the results are written, but the figures were not drawn (normsim plot " << out
                << " to retry)\n";
  return 0;
}

using normsim::app::md_escape;

void list_choices(std::ostream& os, std::string_view title, std::span<const Choice> choices, bool markdown) {
  if (markdown) {
    os << "### " << title << "\n\n| name | meaning |\n|---|---|\n";
    for (const auto& c : choices) os << "| `" << c.name << "` | " << md_escape(c.description) << " |\n";
  } else {
    std::size_t w = 0;
    for (const auto& c : choices) w = std::max(w, c.name.size());
    os << title << ":\n";
    for (const auto& c : choices)
      os << "  " << c.name << std::string(w - c.name.size() + 2, ' ') << c.description << "\n";
  }
}

// The key table's mark of a when_set key (sim/run/config_schema.hpp).
constexpr const char* kWhenSetNote = " (a result-file column only where some configuration sets it)";

void list_keys(std::ostream& os, bool markdown) {
  const Config defaults;
  if (markdown) {
    os << "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
    for (const auto& k : config_keys())
      os << "| `" << k.name << "` | " << type_name(k.type) << " | `" << format_toml(k.get(defaults)) << "` | "
         << md_escape(k.allowed) << " | " << md_escape(k.meaning) << (k.when_set ? kWhenSetNote : "")
         << " |\n";
    os << "\nThe optional `[run]` table holds run options, never model keys:\n\n| key | meaning "
          "|\n|---|---|\n";
    for (const auto& k : run_table_keys()) os << "| `" << k.name << "` | " << md_escape(k.meaning) << " |\n";
    return;
  }
  std::size_t w = 0;
  for (const auto& k : config_keys()) w = std::max(w, k.name.size());
  os << "keys (name, type, default: meaning; allowed values):\n";
  for (const auto& k : config_keys())
    os << "  " << k.name << std::string(w - k.name.size() + 2, ' ') << type_name(k.type) << ", "
       << format_toml(k.get(defaults)) << ": " << k.meaning << "; " << k.allowed << "\n";
  os << "[run] table:\n";
  for (const auto& k : run_table_keys()) os << "  run." << k.name << ": " << k.meaning << "\n";
}

void list_metrics(std::ostream& os, bool markdown) {
  const auto index = [](const MetricInfo& m) { return m.index == MetricIndex::stream ? "l" : "k"; };
  // Whether the `metrics` key's default computes it (costly metrics only when named).
  const auto by_default = [](const MetricInfo& m) { return m.costly ? "no (costly)" : "yes"; };
  if (markdown) {
    os << "### metrics\n\n| metric | index | default | definition |\n|---|---|---|---|\n";
    for (const auto& m : metric_table())
      os << "| `" << m.name << "` | " << index(m) << " | " << by_default(m) << " | "
         << md_escape(m.definition) << " |\n";
    return;
  }
  std::size_t w = 0;
  for (const auto& m : metric_table()) w = std::max(w, m.name.size());
  os << "metrics (index l: stream x_l, l = 0..K; k: sublayer, k = 0..K-1; computed by default unless marked "
        "costly: name those in the config's `metrics` key):\n";
  for (const auto& m : metric_table())
    os << "  " << m.name << std::string(w - m.name.size() + 2, ' ') << index(m) << "  "
       << (m.costly ? "(costly) " : "") << m.definition << "\n";
}

int cmd_list(const std::vector<std::string>& args) {
  std::string what;
  bool markdown = false;
  auto app = normsim::cli::make_command("list", "What can be configured.");
  app->add_option(
      "WHAT", what,
      "keys, placements, sublayers, activations, norms, inits, parametrizations, metrics, claims or families "
      "(default: all)");
  app->add_flag("--markdown", markdown,
                "Markdown tables (experiments/README.md holds the output of `normsim list keys --markdown`)");
  if (!normsim::cli::parse(*app, args)) return 0;
  const bool all = what.empty();
  bool any = false;
  const auto section = [&](std::string_view name) {
    if (!all && what != name) return false;
    if (any) std::cout << "\n";
    any = true;
    return true;
  };
  if (section("keys")) list_keys(std::cout, markdown);
  if (section("placements")) list_choices(std::cout, "placements", placement_choices(), markdown);
  if (section("sublayers")) list_choices(std::cout, "sublayers", sublayer_choices(), markdown);
  if (section("activations")) list_choices(std::cout, "activations", activation_choices(), markdown);
  if (section("norms")) list_choices(std::cout, "norms", norm_choices(), markdown);
  if (section("inits")) list_choices(std::cout, "inits", init_choices(), markdown);
  if (section("parametrizations")) normsim::app::list_parametrizations(std::cout, markdown);
  if (section("metrics")) list_metrics(std::cout, markdown);
  if (section("claims")) normsim::app::list_claims(std::cout, markdown);
  if (section("families")) normsim::app::list_families(std::cout, normsim::app::families_dir(), markdown);
  if (!any)
    throw normsim::cli::UsageError(
        "unknown list '" + what +
        "' (keys, placements, sublayers, activations, norms, inits, parametrizations, metrics, claims, "
        "families)");
  return 0;
}

int print_version() {
#ifdef NORMSIM_HAVE_CUDA
  constexpr const char* cuda = "yes";
#else
  constexpr const char* cuda = "no";
#endif
#ifdef NORMSIM_HAVE_REFERENCE
  constexpr const char* reference = "yes";
#else
  constexpr const char* reference = "no";
#endif
#ifdef NORMSIM_HAVE_MPI
  constexpr const char* mpi = "yes";
#else
  constexpr const char* mpi = "no";
#endif
  std::cout << "normsim " << normsim_version() << " (git " << normsim_git_commit()
            << ")\nCUDA backend: " << cuda << "\nReference device: " << reference << "\nMPI: " << mpi << "\n";
  return 0;
}

int dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kMainHelp;
    return 0;
  }
  if (command == "--version" || command == "version") return print_version();
  if (command == "run") return cmd_run(args);
  if (command == "list") return cmd_list(args);
  if (command == "plot") return normsim::app::plot_command(args);
  if (command == "check") return normsim::app::check_command(args);
  if (command == "coord") return normsim::app::coord_command(args, cmd_run);
  throw normsim::cli::UsageError("unknown command '" + command + "'");
}

}  // namespace

// Under mpirun every rank parses the config before MPI starts: only rank 0 says what is wrong with it.
bool silent_rank() {
#ifdef NORMSIM_HAVE_MPI
  return normsim::mpi::launched_with_ranks() && normsim::mpi::world_rank_from_env().value_or(0) != 0;
#else
  return false;
#endif
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kMainHelp;
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  const bool known =
      command == "run" || command == "list" || command == "coord";  // plot and check map their own errors
  return normsim::cli::exit_status<ConfigError>(
      known ? command : "",
      [&] {
        normsim::sim::cpu::register_backend();  // makes --backend cpu (and auto's fallback) find the CPU
                                                // engine
#ifdef NORMSIM_HAVE_CUDA
        normsim::gpu::register_backend();  // makes --backend cuda/auto find the CUDA backend (docs/gpu.md)
#endif
#ifdef NORMSIM_HAVE_REFERENCE
        normsim::gpu::register_reference_backend();  // --backend reference (docs/gpu.md)
#endif
        try {
          return dispatch(command, args);
        } catch (const SweepError& e) {
          throw normsim::cli::InputError(e.what());  // a refused OUT (not empty, another grid): exit 2
        }
      },
      silent_rank());
}
