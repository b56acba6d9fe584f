// render_folder: check everything, build every figure, draw them, write the report (see render_folder.hpp).
#include "render_folder.hpp"

#include <algorithm>
#include <iostream>
#include <optional>
#include <set>

#include "claim_figures.hpp"
#include "coord_figures.hpp"
#include "depth_figures.hpp"
#include "gnuplot_process.hpp"
#include "gradient_figures.hpp"
#include "heatmap_figures.hpp"
#include "profile_figures.hpp"
#include "render_figures.hpp"
#include "report.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

namespace fs = std::filesystem;

namespace {

void check_options(const PlotOptions& options) {
  if (options.formats.empty())
    throw input_error("no output format chosen; pass --format with one or more of pdf, svg, png");
  for (const auto& format : options.formats)
    if (format != "pdf" && format != "svg" && format != "png")
      throw input_error("unknown format '" + format +
                        "'; --format takes pdf, svg and png (comma-separated); " +
                        "for a LaTeX version add --latex");
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The metrics the run's configs asked for with their `metrics` key (run.json's asked_metrics, present when
// that is not the key's default), or nullopt.
std::optional<std::vector<std::string>> asked_metrics(const ResultsFolder& folder) {
  const auto it = folder.run.find("asked_metrics");
  if (it == folder.run.end() || !it->is_array()) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& name : *it)
    if (name.is_string()) names.push_back(name.get<std::string>());
  return names;
}

bool asks_for_all(const PlotOptions& options) {
  return std::find(options.metrics.begin(), options.metrics.end(), all_metrics) != options.metrics.end();
}

// The metrics asked for, each checked against summary.csv (see PlotOptions::metrics).
std::vector<std::string> chosen_metrics(const ResultsFolder& folder, const PlotOptions& options) {
  if (asks_for_all(options)) return folder.metrics;
  if (options.metrics.empty()) {
    std::vector<std::string> chosen;
    for (const auto& metric : asked_metrics(folder).value_or(default_figure_metrics))
      if (folder.has_metric(metric)) chosen.push_back(metric);
    return chosen;
  }
  std::vector<std::string> metrics;
  for (const auto& metric : options.metrics) {
    if (!folder.has_metric(metric))
      throw input_error(
          "metric '" + metric + "' is not in " + (folder.dir / "summary.csv").string() +
          "; it has: " + joined(folder.metrics) + " (or ask for all of them with '" + all_metrics + "')" +
          ". Pick one of those with --metric, or add the metric to the config's `metrics` and run again");
    if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) metrics.push_back(metric);
  }
  return metrics;
}

// Heatmaps are many (one per placement and metric), so by default (and with "all") only the two the papers
// draw, unless the run's `metrics` key or --metric named the metrics.
std::vector<std::string> heatmap_metrics(const ResultsFolder& folder, const PlotOptions& options,
                                         const std::vector<std::string>& metrics) {
  if (!options.metrics.empty() && !asks_for_all(options)) return metrics;
  if (options.metrics.empty() && asked_metrics(folder)) return metrics;
  std::vector<std::string> chosen;
  for (const char* metric : {"act_sq", "grad_sq"})
    if (folder.has_metric(metric)) chosen.push_back(metric);
  return chosen;
}

}  // namespace

void render_folder(const fs::path& out, const PlotOptions& options) {
  check_options(options);
  const ResultsFolder folder = load_results(out, options.step, options.claims_only);
  if (options.claims_only && !folder.has_verdicts)
    throw input_error("no claim figures to draw: " + (out / "verdicts.json").string() +
                      " does not exist (`normsim check --out " + out.string() +
                      "` writes it); leave out claims_only to draw the other figures");
  const auto metrics = options.claims_only ? std::vector<std::string>{} : chosen_metrics(folder, options);
  const fs::path gnuplot = find_gnuplot();

  std::vector<Figure> figures = claim_figures(folder);
  auto append = [&](std::vector<Figure> more) {
    for (auto& figure : more) figures.push_back(std::move(figure));
  };
  if (!options.claims_only) {
    append(profile_figures(folder, metrics));
    append(gradient_figures(folder, metrics));
    append(depth_figures(folder, metrics, DepthLayer::last));
    if (options.depth_at_first_layer) append(depth_figures(folder, metrics, DepthLayer::first));
    append(heatmap_figures(folder, heatmap_metrics(folder, options, metrics), options.heatmap_layer));
    append(coord_figures(out));  // a folder `normsim coord` wrote
  }

  // Names come from values in the data, and two values can map to one file name: keep both figures.
  std::set<std::string> names;
  for (auto& figure : figures) {
    std::string name = figure.name;
    for (int i = 2; names.count(name); ++i) name = figure.name + "-" + std::to_string(i);
    names.insert(name);
    figure.name = figure.script.name = name;
  }

  const fs::path figures_dir = out / "figures";
  std::error_code error;
  fs::create_directories(figures_dir, error);
  if (error)
    throw environment_error("cannot create " + figures_dir.string() + ": " + error.message() +
                            " (check that the results folder is writable)");
  if (!options.quiet)
    std::cerr << "normsim plot: drawing " << figures.size() << " figures into " << figures_dir.string()
              << (options.verbose ? ":" : "") << "\n";
  const auto rendered = render_figures(figures, figures_dir, options, gnuplot);
  if (options.report) {
    write_report(folder, rendered, options.report_markdown);
    if (!options.quiet)
      std::cerr << "normsim plot: wrote "
                << (options.report_markdown ? (out / "report.md").string() + " and report.html"
                                            : (out / "report.html").string())
                << "\n";
  }
}

}  // namespace normsim::plots
