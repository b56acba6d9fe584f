// Argument parsing for `normsim plot` (see plot_command.hpp).
#include "plot_command.hpp"

#include <iostream>
#include <optional>
#include <sstream>

#include "render_folder.hpp"

namespace normsim::plots {

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

struct Parsed {
  bool help = false;
  std::string out;
  PlotOptions options;
};

Parsed parse(const std::vector<std::string>& args) {
  Parsed parsed;
  bool formats_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::optional<std::string> inline_value;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      inline_value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
    }
    // The option's value: after '=' or the next argument.
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
        throw input_error(arg + " needs a value; see `normsim plot --help`");
      return args[++i];
    };
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
    } else if (arg == "--metric") {
      for (const auto& metric : split_commas(value())) parsed.options.metrics.push_back(metric);
      // `--metric a b c`: further bare words are metrics too, once OUT is known.
      while (!parsed.out.empty() && i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0)
        for (const auto& metric : split_commas(args[++i])) parsed.options.metrics.push_back(metric);
    } else if (arg == "--size") {
      const std::string size = value();
      if (size == "one-column")
        parsed.options.size = FigureSize::one_column;
      else if (size == "two-column")
        parsed.options.size = FigureSize::two_column;
      else
        throw input_error("--size takes one-column (3.5 x 2.6 in) or two-column (7 x 3.2 in), not '" + size +
                          "'");
    } else if (arg == "--format") {
      if (!formats_given) parsed.options.formats.clear();
      formats_given = true;
      for (const auto& format : split_commas(value())) parsed.options.formats.push_back(format);
    } else if (arg == "--latex") {
      parsed.options.latex = true;
    } else if (arg == "--quiet" || arg == "-q") {
      parsed.options.quiet = true;
    } else if (arg == "--verbose" || arg == "-v") {
      parsed.options.verbose = true;
    } else if (arg == "--heatmap-layer") {
      const std::string axis = value();
      if (axis == "normalized")
        parsed.options.heatmap_layer = HeatmapLayer::normalized;
      else if (axis == "raw")
        parsed.options.heatmap_layer = HeatmapLayer::raw;
      else
        throw input_error("--heatmap-layer takes normalized or raw, not '" + axis + "'");
    } else if (arg == "--depth-at-first-layer") {
      parsed.options.depth_at_first_layer = true;
    } else if (arg == "--claims-only") {
      parsed.options.claims_only = true;
    } else if (arg == "--no-report") {
      parsed.options.report = false;
    } else if (arg.rfind("-", 0) == 0) {
      throw input_error("unknown option '" + arg + "'; see `normsim plot --help`");
    } else if (parsed.out.empty()) {
      parsed.out = arg;
    } else {
      throw input_error("unexpected argument '" + arg + "': normsim plot takes one results folder");
    }
  }
  if (!parsed.help && parsed.out.empty())
    throw input_error("no results folder given: usage is `normsim plot OUT [options]` (see --help)");
  return parsed;
}

}  // namespace

std::string plot_usage() {
  return R"(usage: normsim plot OUT [options]

Draws the figures of the results folder OUT (written by `normsim run` or `normsim check`) into
OUT/figures, each as NAME.pdf/.svg/.png with NAME.csv (its data) and NAME.gp (the gnuplot script that
draws it: `cd OUT/figures && gnuplot NAME.gp`), and writes OUT/report.md and OUT/report.html.

options:
  --metric M[,M...]        these metrics (repeatable; `all`: every metric in summary.csv;
                           default: act_sq, grad_sq, gradw_w2)
  --size one-column|two-column
                           3.5 x 2.6 in (default) or 7 x 3.2 in
  --format F[,F...]        any of pdf, svg, png (default: all three)
  --latex                  also NAME-tex.tex + NAME-tex.pdf (cairolatex: text in the paper's fonts)
  --heatmap-layer normalized|raw
                           heatmap x axis: layer / depth (default) or the raw layer
  --depth-at-first-layer   depth-scaling plots at layer 0 as well as at the last layer
  --claims-only            only the claim figures (claim_<id>, after `normsim check`)
  --no-report              figures only
  --quiet, -q              no progress output
  --verbose, -v            list every figure drawn (on stderr)
  --help, -h               this text

exit status: 0 done, 2 usage or input error, 1 gnuplot missing or failing.
See docs/figures.md for every figure kind.
)";
}

int plot_command(const std::vector<std::string>& args) {
  try {
    const Parsed parsed = parse(args);
    if (parsed.help) {
      std::cout << plot_usage();
      return 0;
    }
    render_folder(parsed.out, parsed.options);
    return 0;
  } catch (const PlotError& e) {
    std::cerr << "normsim plot: error: " << e.what() << "\n";
    return e.exit_status();
  } catch (const std::exception& e) {
    std::cerr << "normsim plot: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace normsim::plots
