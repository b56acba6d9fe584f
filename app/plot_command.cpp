// Argument parsing for `normsim plot` (see plot_command.hpp), through the shared command-line layer.
#include "app/plot_command.hpp"

#include <iostream>

#include "cli/command_line.hpp"
#include "plots/render_folder.hpp"

namespace normsim::app {

using namespace normsim::plots;

namespace {

struct Parsed {
  std::string out, out_option, size, heatmap_layer;
  std::vector<std::string> formats;
  cli::Verbosity verbosity;
  bool no_report = false;
  PlotOptions options;
};

constexpr const char* kPlotDescription =
    R"(Draws the figures of the results folder OUT (written by `normsim run` or `normsim check`) into
OUT/figures, each as NAME.pdf/.svg/.png with NAME.csv (its data) and NAME.gp (the gnuplot script that
draws it: `cd OUT/figures && gnuplot NAME.gp`), and writes OUT/report.md and OUT/report.html.
See docs/figures.md for every figure kind.)";

std::unique_ptr<CLI::App> plot_parser(Parsed& p) {
  auto app = cli::make_command("plot", kPlotDescription);
  app->add_option("OUT", p.out, "results folder")->type_name("");
  app->add_option("--out", p.out_option, "the same folder, named as `run` and `check` name it")
      ->type_name("OUT");
  app->add_option("--metric", p.options.metrics,
                  "these metrics (repeatable; `all`: every metric in summary.csv; default: the run's "
                  "`metrics`, else act_sq, grad_sq, gradw_w2)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("M[,M...]");
  app->add_option("--size", p.size, "3.5 x 2.6 in (default) or 7 x 3.2 in")
      ->type_name("one-column|two-column");
  app->add_option("--format", p.formats, "any of pdf, svg, png (default: all three)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("F[,F...]");
  app->add_flag("--latex", p.options.latex,
                "also NAME-tex.tex + NAME-tex.pdf (cairolatex: the paper's fonts)");
  app->add_option("--heatmap-layer", p.heatmap_layer,
                  "heatmap x axis: layer / depth (default) or the raw layer")
      ->type_name("normalized|raw");
  app->add_flag("--depth-at-first-layer", p.options.depth_at_first_layer,
                "depth-scaling plots at layer 0 as well as at the last layer");
  app->add_flag("--claims-only", p.options.claims_only,
                "only the claim figures (claim_<id>, after `normsim check`)");
  app->add_option("--step", p.options.step,
                  "a results folder with training steps: the step the figures draw (default 0, init)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("S");
  app->add_flag("--no-report", p.no_report, "figures only");
  cli::add_verbosity(*app, p.verbosity);
  return app;
}

// The values CLI11 leaves as text, checked and turned into options.
void finish(Parsed& p) {
  if (!p.out.empty() && !p.out_option.empty() && p.out != p.out_option)
    throw cli::UsageError("two results folders given ('" + p.out + "' and --out '" + p.out_option +
                          "'): give one");
  if (p.out.empty()) p.out = p.out_option;
  if (p.out.empty())
    throw cli::UsageError("no results folder given: usage is `normsim plot OUT [options]` or `--out OUT`");
  if (p.size == "two-column")
    p.options.size = FigureSize::two_column;
  else if (!p.size.empty() && p.size != "one-column")
    throw cli::UsageError("--size takes one-column (3.5 x 2.6 in) or two-column (7 x 3.2 in), not '" +
                          p.size + "'");
  if (p.heatmap_layer == "raw")
    p.options.heatmap_layer = HeatmapLayer::raw;
  else if (!p.heatmap_layer.empty() && p.heatmap_layer != "normalized")
    throw cli::UsageError("--heatmap-layer takes normalized or raw, not '" + p.heatmap_layer + "'");
  if (!p.formats.empty()) p.options.formats = p.formats;
  p.options.report = !p.no_report;
  p.options.quiet = p.verbosity.quiet;
  p.options.verbose = p.verbosity.verbose;
}

}  // namespace

std::string plot_usage() {
  Parsed unused;
  return plot_parser(unused)->help();
}

int plot_command(const std::vector<std::string>& args) {
  return cli::exit_status("plot", [&] {
    Parsed parsed;
    if (!cli::parse(*plot_parser(parsed), args)) return 0;
    finish(parsed);
    try {
      render_folder(parsed.out, parsed.options);
    } catch (const PlotError& e) {
      if (e.kind() == PlotError::Kind::input) throw cli::InputError(e.what());
      throw;
    }
    return 0;
  });
}

}  // namespace normsim::app
