// `normsim coord` (see coord_command.hpp).
#include "app/coord_command.hpp"

#include <algorithm>
#include <iostream>

#include "app/plot_command.hpp"
#include "check/coord.hpp"
#include "cli/command_line.hpp"

namespace normsim::app {

namespace {

constexpr const char* kCoordDescription =
    R"(Runs CONFIG over the swept key (width or depth, two or more positive integers) as `normsim run` does,
then fits, for each metric, layer (an index, the last layer in a depth sweep, and the layer mean) and step,
the exponent b of metric ~ key^b (per-sample log-log least squares, 95 % Student-t interval over samples),
compares it with the exponent the parametrization predicts (Pre-LN, Adam: docs/theory_notes.md "Coordinate
checks") and writes OUT/coord/fits.csv, verdicts.csv and lines.csv, then the figures. Every other option is
`normsim run`'s (--set, --force, --resume, --backend, --threads, -q, -v).)";

struct Sweep {
  std::string key, list;  // list: the TOML array the run's --set takes
};

Sweep parse_sweep(const std::string& text) {
  const auto eq = text.find('=');
  Sweep s{text.substr(0, eq), "["};
  if (eq == std::string::npos || (s.key != "width" && s.key != "depth"))
    throw cli::UsageError("--sweep takes width=N1,N2,... or depth=N1,N2,..., not '" + text + "'");
  int count = 0;
  for (std::size_t at = eq + 1; at <= text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string value = text.substr(at, end - at);
    if (value.empty() || !std::all_of(value.begin(), value.end(), ::isdigit) || std::stol(value) <= 0)
      throw cli::UsageError("--sweep " + s.key + ": '" + value + "' is not a positive integer");
    s.list += (count++ ? "," : "") + value;
    at = end + 1;
  }
  if (count < 2) throw cli::UsageError("--sweep " + s.key + " needs two or more values to fit an exponent");
  s.list += "]";
  return s;
}

}  // namespace

int coord_command(const std::vector<std::string>& args, const RunCommand& run) {
  std::string config, out, sweep_text;
  bool no_plots = false;
  auto app = cli::make_command("coord", kCoordDescription);
  app->add_option("CONFIG", config, "the TOML config file")->type_name("");
  app->add_option("--sweep", sweep_text, "the swept key and its values: width=128,256,512 or depth=4,8,16")
      ->type_name("KEY=N1,N2,...");
  app->add_option("--out", out, "results folder (as normsim run --out)")->type_name("OUT");
  app->add_flag("--no-plots", no_plots, "do not draw figures at the end");
  app->allow_extras();  // normsim run's options, passed on
  if (!cli::parse(*app, args)) return 0;
  if (config.empty()) throw cli::UsageError("no config file");
  if (sweep_text.empty()) throw cli::UsageError("no --sweep (width=... or depth=...)");
  if (out.empty()) throw cli::UsageError("no --out folder");
  const Sweep sweep = parse_sweep(sweep_text);
  std::vector<std::string> run_args = {config,      "--out", out, "--set", sweep.key + "=" + sweep.list,
                                       "--no-plots"};
  const std::vector<std::string> extras = app->remaining();
  run_args.insert(run_args.end(), extras.begin(), extras.end());
  const auto has = [&](const char* flag) {
    return std::find(extras.begin(), extras.end(), flag) != extras.end();
  };
  if (const int rc = run(run_args); rc != 0 || has("--dry-run")) return rc;  // a plan only: nothing to fit
  const auto result = check::coord_fits(out, sweep.key);
  check::write_coord(out, result);
  const bool quiet = has("-q") || has("--quiet");
  if (!quiet) std::cerr << "normsim coord: " << check::coord_summary(result) << " (" << out << "/coord/)\n";
  if (no_plots) return 0;
  std::vector<std::string> plot_args = {out};
  if (quiet) plot_args.emplace_back("--quiet");
  return plot_command(plot_args) > 0 ? 1 : 0;
}

}  // namespace normsim::app
