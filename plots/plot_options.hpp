// What a user can choose about the figures of one results folder; the command line and `normsim run`/`check`
// fill it. Defaults give the figures of a small default set of metrics (default_figure_metrics), one-column
// size, PDF + SVG + PNG and a report.
#pragma once

#include <string>
#include <vector>

namespace normsim::plots {

enum class FigureSize {
  one_column,  // 3.5 in x 2.6 in
  two_column,  // 7 in x 3.2 in
};

// The x axis of a layer x depth heatmap: the layer divided by the depth (profiles of all depths line up) or
// the raw layer index.
enum class HeatmapLayer { normalized, raw };

struct PlotOptions {
  // The metrics to draw: empty for the run's own (run.json's asked_metrics, from the config's `metrics` key)
  // or else default_figure_metrics (those summary.csv has), any list holding "all" for every metric in
  // summary.csv, else exactly these.
  std::vector<std::string> metrics;
  FigureSize size = FigureSize::one_column;
  bool latex = false;  // also write <name>-tex.tex + <name>-tex.pdf (cairolatex: text set by LaTeX)
  std::vector<std::string> formats = {"pdf", "svg", "png"};
  bool quiet = false;    // no progress lines on stderr
  bool verbose = false;  // also one line per figure drawn, on stderr
  HeatmapLayer heatmap_layer = HeatmapLayer::normalized;
  bool depth_at_first_layer = false;  // depth-scaling plots at layer 0 too, not only at the last layer
  bool report = true;                 // write OUT/report.md and OUT/report.html
  bool report_markdown = true;        // with report: also report.md (normsim check keeps its own)
  // Only the claim figures (claim_<id>, from verdicts.json + claims/<id>/data.csv): what `normsim check`
  // draws. `metrics`, `heatmap_layer` and `depth_at_first_layer` are then not used.
  bool claims_only = false;
  // A results folder with training steps (a `step` column, docs/conventions.md): the step whose rows every
  // figure draws (summary.csv, theory.csv, nonfinite.csv); 0 is init. Without a step column: 0 only.
  int step = 0;
};

// The figures drawn when no metric is asked for: the stream's second moment, the hidden-state gradient and
// the last MLP matrix's gradient (the Xiong et al. figure), so a quick run gets a few figures in a fraction
// of a second rather than one per metric (seventeen) in seconds.
inline const std::vector<std::string> default_figure_metrics = {"act_sq", "grad_sq", "gradw_w2"};
// The --metric value that asks for every metric.
inline constexpr const char* all_metrics = "all";

struct SizeInches {
  double width;
  double height;
};

inline SizeInches size_inches(FigureSize size) {
  return size == FigureSize::one_column ? SizeInches{3.5, 2.6} : SizeInches{7.0, 3.2};
}

// Pixels per inch of the PNG: enough for print, and the PNG's pixel size follows from it.
inline constexpr int png_dpi = 300;

}  // namespace normsim::plots
