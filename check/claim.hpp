// A claim as data: what a paper, a seed document or the project's own theory says, the simulation that tests
// it, the statistic measured, and what counts as agreement. One TOML file per claim in experiments/claims/
// (format: docs/claims.md). The simulation part is an ordinary normsim config (sim::Grid), so every key,
// default and check of a config file applies to it unchanged.
#pragma once
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/run/config_file.hpp"

namespace normsim::check {

// A claim file that cannot be used; what() reads "FILE:LINE: key 'K': why" (the config-file form).
class ClaimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How the measured values become one statistic (check/evaluate.hpp says what each computes).
enum class FitKind {
  linear,       // per-sample least-squares slope of y against x (each optionally log)
  powerlaw,     // linear with log x and log y: the exponent
  ratio,        // per-sample y[numerator] / y[denominator] (its log averaged), at the deciding x
  bound,        // y stays inside the agreement band at every x
  profile,      // y / prediction - 1 stays inside the band at every x (prediction: the mean field)
  convergence,  // exponent of |mean(y) - meanfield| against x (finite-width corrections)
};
// literature: what a paper or seed document says, in its words (the quote in `source`); reading: normsim's
// own reading of a source (a paraphrase, a statement built on unconfirmed equations, or a consequence the
// source does not state), reported as consistent or inconsistent with that reading, never as the source's
// verdict; self: the project's own theory (a derivation) against its own simulator.
enum class ClaimKind { literature, reading, self };

struct ClaimSpec {
  std::string id, statement, source, note;
  // The words tested, verbatim: the source's for literature, the passage read for a reading, theory.md's or
  // theory_notes.md's for self (tests/check/test_claim_files.cpp finds the latter in the docs).
  std::string quote;
  // Where the agreement band comes from: a quoted source or a stated principle, never a look at the data.
  std::string band_source;
  // false: the statement is about trained models; the verdict is "not testable at init" (the simulation
  // still runs, to show what init gives), unless the claim is read at a training step (step > 0): it is
  // judged at that step.
  // Required in every claim file: the decision of docs/claims.md's one rule ("Testable at initialization").
  bool testable_at_init = true;
  // false: results are reported per setting and no verdict is given (a statement built on equations the
  // sources were not reached for: which setting the source means is unknown, so no point may decide).
  bool judged = true;
  ClaimKind kind = ClaimKind::literature;
  std::string reading_of;  // kind reading: whose statement is read ("the B2T paper"), for the verdict's words
  // Sequential looks: the sample counts at which the verdict was read, oldest first (empty: one look, at
  // `samples`). With m looks every interval is a Bonferroni-corrected 1 - 0.05/m interval, so the chance of
  // a wrong decision over all looks stays <= 5 % (docs/claims.md, "Sample counts are fixed in advance").
  std::vector<int> looks;
  double confidence = 0.95;
  std::string file;  // where it was read from (for messages)

  // The simulation: at most one swept key (the x axis); none means x is the layer index of one config.
  sim::Grid grid;
  // [torch] file: a Python file whose blocks(config) normsim.torch measures instead of the simulator
  // (check/torch_block.hpp), resolved against the claim file's folder; "" for the simulator.
  std::string torch_file;
  double torch_timeout = 600;  // [torch] timeout: seconds the block's Python may take, all configs together
  std::string x_key;           // "layer" or the swept key
  // [reference]: a config each point is compared with, sample by sample (the statistic is y - y_ref; the
  // mean field's likewise). Same samples, so the differences pair independent draws of both.
  std::optional<sim::Config> reference;
  // When the reference reads the swept key (depth, say), one reference per point instead, at that point's x
  // (same order as grid.configs); empty otherwise.
  std::vector<sim::Config> reference_per_x;

  // What is read from each sample's record.
  std::string metric;            // a metric name, or a product "a*b" of metrics with the same index
  std::string layers = "all";    // x = layer: the layers that enter ("all", "A:B", negatives from the end)
  std::string layer = "last";    // x = key: the layer read ("first", "last", "max", "min", an integer)
  std::string reduce = "value";  // per config: "value" (y at `layer`), "slope" or "logslope" (the
                                 // least-squares slope of y or ln y against the layer over `layers`),
                                 // "logrange" (ln(max y / min y) over `layers`: how far from uniform)
  std::string denominator;       // ratio: the denominator's layer (same forms as `layer`)
  // [measure] step: the training step whose record is read, one per sample (sweep.steps = T > 0 gives the
  // records of steps 0 .. T; issue 28 item 5); 0 at init and in a claim without steps.
  int step = 0;
  // ratio over a swept key: the x whose ratio the source states (empty: every point is judged, and the
  // claim holds only if it holds at all of them).
  std::optional<double> decide_at;

  FitKind fit = FitKind::linear;
  bool log_x = false, log_y = false;  // transforms inside the fit (powerlaw sets both)

  // The prediction: a number, or the mean field of the same statistic.
  std::optional<double> predicted;
  bool meanfield = false;
  // The agreement band around the prediction: [predicted - tol, predicted + tol], tol = max(tolerance,
  // rel_tolerance * |predicted|); explicit lower/upper replace either side (one-sided bounds).
  double tolerance = 0, rel_tolerance = 0;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  bool has_lower = false, has_upper = false;

  // The figure the plots library draws from claims/<id>/data.csv.
  std::string figure_kind = "line", x_label, y_label;
  bool figure_log_x = false, figure_log_y = false;
};

// Whether a profile claim's band bounds the relative deviation y / meanfield - 1 (rel_tolerance alone);
// an absolute tolerance or an explicit lower/upper bounds y - meanfield.
inline bool profile_band_is_relative(const ClaimSpec& c) {
  return c.fit == FitKind::profile && c.tolerance == 0 && !c.has_lower && !c.has_upper;
}

// Reads one claim file; `full` applies its [full] table over [sweep]. Throws ClaimError naming file, line,
// key.
ClaimSpec load_claim(const std::filesystem::path& file, bool full = false);
// Every *.toml in `dir`, sorted by file name; `ids` (if not empty) picks claims by id, in the order given,
// and an unknown id is a ClaimError.
std::vector<ClaimSpec> load_claims(const std::filesystem::path& dir, const std::vector<std::string>& ids = {},
                                   bool full = false);

std::string_view to_string(FitKind k);
std::string_view to_string(ClaimKind k);

}  // namespace normsim::check
