// Test fixtures for plots/: a small synthetic results folder written in the exact formats of
// docs/conventions.md (until the simulator writes real ones), temporary folders, environment overrides, and
// readers for the PNG and PDF headers.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace normsim::plots::test {

// A fresh folder under the system temp dir, removed with everything in it when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Sets (or, with nullopt, unsets) an environment variable for the object's lifetime.
class EnvOverride {
 public:
  EnvOverride(std::string name, std::optional<std::string> value);
  ~EnvOverride();

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

struct FixtureOptions {
  std::vector<std::string> placements = {"pre", "post"};
  std::vector<int> depths = {4, 8, 16};
  bool theory = true;    // theory.csv for act_sq
  bool verdicts = true;  // verdicts.json and claims/<id>/data.csv for two claims
  // The placements' values become variants, as `variants` writes them: placement pre everywhere, swept keys
  // label ("variant <name>") and norm (layernorm and rmsnorm by turns, so it varies with the label), and
  // theory.csv only for the first variant.
  bool variants = false;
};

// Writes run.json, summary.csv, layers.csv and the optional files into `out` (created if needed). Metrics:
// act_sq, grad_sq (stream-indexed), cos_next, gradw_w1, gradw_w2 (sublayer-indexed). The last layer's
// gradw_w2 scales like K^(-1/2) for pre and K^0 for post; post's grad_sq spans three decades (a log axis).
void write_results_folder(const std::filesystem::path& out, const FixtureOptions& options = {});

// The claim ids the fixture writes.
std::vector<std::string> fixture_claim_ids();

std::string read_text(const std::filesystem::path& path);

// `fields` with a field inserted at column `at`, as one CSV line with its newline: the tests that rewrite
// the fixture's tables with an added column (lane, step) write their rows with it.
std::string csv_line_with(std::vector<std::string> fields, std::size_t at, const std::string& field);

// Width and height in pixels from the PNG's IHDR chunk; throws if the file is not a PNG.
std::pair<unsigned, unsigned> png_size(const std::filesystem::path& path);

// Width and height in points of the PDF's first /MediaBox; throws if there is none.
std::pair<double, double> pdf_page_size(const std::filesystem::path& path);

// Fails the test loudly when gnuplot is not on PATH (CI installs it; these tests cannot be skipped).
void require_gnuplot();

// Runs plot_command with stderr captured: {exit status, what it printed to stderr}.
std::pair<int, std::string> run_plot_command(const std::vector<std::string>& args);

}  // namespace normsim::plots::test
