// The synthetic results folder and test helpers (see results_fixture.hpp).
#include "results_fixture.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "app/plot_command.hpp"
#include "io/csv_write.hpp"

namespace normsim::plots::test {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& tag) {
  static int counter = 0;
  path_ = fs::temp_directory_path() /
          ("normsim-plots-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

EnvOverride::EnvOverride(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) saved_ = old;
  if (value)
    ::setenv(name_.c_str(), value->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

EnvOverride::~EnvOverride() {
  if (saved_)
    ::setenv(name_.c_str(), saved_->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path);
  out << text;
  REQUIRE(out.good());
}

double synthetic_mean_of_pre_or_post(const std::string& placement, int depth, const std::string& metric,
                                     int layer);

// The synthetic mean of a metric at one layer: smooth, positive, and with known depth scaling. Placements
// other than pre and post get post's values scaled by a factor of their own, so that no two lines are
// identical (identical lines are drawn once: facets.cpp).
double synthetic_mean(const std::string& placement, int depth, const std::string& metric, int layer) {
  double own = 1;
  if (placement != "pre" && placement != "post")
    for (char c : placement) own += 0.001 * static_cast<unsigned char>(c);
  return own * synthetic_mean_of_pre_or_post(placement, depth, metric, layer);
}

double synthetic_mean_of_pre_or_post(const std::string& placement, int depth, const std::string& metric,
                                     int layer) {
  const bool pre = placement == "pre";
  const double K = depth;
  // A small depth-dependent wiggle so fitted exponents have a non-zero residual (and a finite CI).
  const double wiggle = 1 + 0.02 * std::sin(3.0 * K);
  if (metric == "act_sq") return pre ? 1.0 + layer : 1.0;
  if (metric == "grad_sq") return pre ? 1.0 + (K - layer) / K : std::pow(10.0, 3.0 * (K - layer) / K);
  if (metric == "cos_next") return pre ? 0.95 - 0.2 / (layer + 1) : 0.5;
  if (metric == "gradw_w1") return (pre ? 1.5 : 1.0) * (1.0 + 0.1 * layer / K);
  // gradw_w2: the last sublayer's value scales like K^(-1/2) for pre, is flat for post.
  const double last = pre ? 2.0 / std::sqrt(K) * wiggle : 1.0 * wiggle;
  return last * (1.0 + 0.5 * (K - 1 - layer) / K);
}

bool stream_metric(const std::string& metric) {
  return metric == "act_sq" || metric == "grad_sq";
}

}  // namespace

std::vector<std::string> fixture_claim_ids() {
  return {"xiong_pre_gradw2_depth", "post_act_sq_flat"};
}

void write_results_folder(const fs::path& out, const FixtureOptions& options) {
  const std::vector<std::string> metrics = {"act_sq", "grad_sq", "cos_next", "gradw_w1", "gradw_w2"};
  const int samples = 8;
  nlohmann::json run = {{"normsim_version", "0.1.0"},
                        {"git_commit", "0123456789ab"},
                        {"threads", 2},
                        {"backend", "cpu"},
                        {"started", "2025-01-01T00:00:00Z"},
                        {"timings", {{"total_s", 1.5}}},
                        {"config_file", "fixture.toml"},
                        {"swept_keys", options.variants ? nlohmann::json{"label", "norm", "depth"}
                                                        : nlohmann::json{"placement", "depth"}},
                        {"configs", nlohmann::json::array()},
                        {"metrics",
                         {{"act_sq", "mean_{t,i} x_l[t,i]^2"},
                          {"grad_sq", "mean_{t,i} (dLoss/dx_l[t,i])^2"},
                          {"cos_next", "mean_t cos(x_k[t], x_{k+1}[t])"},
                          {"gradw_w1", "Frobenius norm of dLoss/dW1 of sublayer k"},
                          {"gradw_w2", "Frobenius norm of dLoss/dW2 of sublayer k"}}}};
  std::ostringstream summary, layers, theory;
  const std::string columns =
      options.variants ? "config,placement,label,norm,depth," : "config,placement,depth,";
  summary << columns << "metric,l,k,mean,se,n\n";
  layers << columns << "sample,metric,l,k,value\n";
  theory << columns << "metric,l,k,value\n";
  int id = 0;
  for (const auto& placement : options.placements)
    for (int depth : options.depths) {
      const std::string config = "c" + std::to_string(id++);
      const bool odd = (&placement - options.placements.data()) % 2 == 1;
      const std::string keys =
          (options.variants ? "pre,variant " + placement + "," + (odd ? "rmsnorm" : "layernorm")
                            : placement) +
          "," + std::to_string(depth) + ",";
      const bool with_theory = !options.variants || &placement == &options.placements.front();
      run["configs"].push_back({{"id", config},
                                {"seed", 1000 + id},
                                {"values",
                                 {{"placement", placement},
                                  {"depth", depth},
                                  {"width", 64},
                                  {"tokens", 16},
                                  {"sublayer", "mlp"},
                                  {"norm", "layernorm"},
                                  {"samples", samples}}}});
      for (const auto& metric : metrics) {
        const int layers_of = stream_metric(metric) ? depth + 1 : depth;
        for (int layer = 0; layer < layers_of; ++layer) {
          const double mean = synthetic_mean(placement, depth, metric, layer);
          // "metric,l,k": the index in l for stream metrics, in k for sublayer metrics.
          std::string index = metric;
          index.append(stream_metric(metric) ? "," : ",,").append(std::to_string(layer));
          index.append(stream_metric(metric) ? ",," : ",");
          summary << config << ',' << keys << index << mean << ',' << 0.05 * mean << ',' << samples << '\n';
          for (int s = 0; s < samples; ++s)
            layers << config << ',' << keys << s << ',' << index << mean * (1 + 0.1 * (s - 3.5) / 3.5)
                   << '\n';
          if (metric == "act_sq" && with_theory)
            theory << config << ',' << keys << index << (placement == "pre" ? 1.0 + layer : 1.0) << '\n';
        }
      }
    }
  write(out / "run.json", run.dump(2));
  write(out / "summary.csv", summary.str());
  write(out / "layers.csv", layers.str());
  if (options.theory) write(out / "theory.csv", theory.str());
  if (!options.verdicts) return;

  const auto ids = fixture_claim_ids();
  nlohmann::json verdicts = nlohmann::json::array();
  verdicts.push_back({{"id", ids[0]},
                      {"statement", "Pre-LN's last-layer ||dL/dW2|| scales like K^(-1/2)"},
                      {"source", "Xiong et al. 2020, Theorem 1"},
                      {"predicted", -0.5},
                      {"measured", -0.49},
                      {"ci_low", -0.55},
                      {"ci_high", -0.43},
                      {"verdict", "confirmed"},
                      {"metric", "gradw_w2"},
                      {"fit", "powerlaw"},
                      {"figure_kind", "scaling"},
                      {"x_label", "depth K"},
                      {"y_label", "||dL/dW_2||_F at the last layer"},
                      {"log_x", true},
                      {"log_y", true}});
  verdicts.push_back({{"id", ids[1]},
                      {"statement", "Post-LN keeps E[x_l^2] = 1 at every layer"},
                      {"source", "derived"},
                      {"band_source", "stated principle: 1 % of the mean field"},
                      {"predicted", 1.0},
                      {"measured", 1.0},
                      {"ci_low", 0.98},
                      {"ci_high", 1.02},
                      {"verdict", "inconclusive"},
                      {"kind", "literature"},
                      {"meanfield", 1.01},
                      {"band_low", 0.99},
                      {"band_high", nullptr},
                      {"n", 16},
                      {"decided_at", 8},
                      {"samples_needed", 40},
                      {"figure_kind", "profile"},
                      {"x_label", "layer l"},
                      {"y_label", "E[x_l^2]"},
                      {"log_x", false},
                      {"log_y", false}});
  write(out / "verdicts.json", verdicts.dump(2));
  std::ostringstream scaling, profile;
  scaling << "x,measured,se,predicted\n";
  for (int depth : options.depths)
    scaling << depth << ',' << synthetic_mean("pre", depth, "gradw_w2", depth - 1) << ",0.01,"
            << 2.0 / std::sqrt(double(depth)) << '\n';
  profile << "x,measured,se,predicted\n";
  for (int layer = 0; layer <= 8; ++layer)
    profile << layer << ",1.0,0.02," << (layer % 2 ? "" : "1.0") << '\n';
  write(out / "claims" / ids[0] / "data.csv", scaling.str());
  write(out / "claims" / ids[1] / "data.csv", profile.str());
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::pair<unsigned, unsigned> png_size(const fs::path& path) {
  const std::string bytes = read_text(path);
  // Signature (8 bytes), IHDR length (4) and type (4), then width and height, big-endian.
  if (bytes.size() < 24 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || bytes.compare(12, 4, "IHDR") != 0)
    throw std::runtime_error(path.string() + " is not a PNG");
  auto be32 = [&](std::size_t at) {
    unsigned value = 0;
    for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
    return value;
  };
  return {be32(16), be32(20)};
}

std::pair<double, double> pdf_page_size(const fs::path& path) {
  const std::string bytes = read_text(path);
  static const std::regex media_box(
      R"(/MediaBox\s*\[\s*([-0-9.]+)\s+([-0-9.]+)\s+([-0-9.]+)\s+([-0-9.]+)\s*\])");
  std::smatch match;
  if (bytes.compare(0, 5, "%PDF-") != 0 || !std::regex_search(bytes, match, media_box))
    throw std::runtime_error(path.string() + " is not a PDF with a /MediaBox");
  return {std::stod(match[3]) - std::stod(match[1]), std::stod(match[4]) - std::stod(match[2])};
}

void require_gnuplot() {
  const int status = std::system("gnuplot --version > /dev/null 2>&1");
  INFO("gnuplot must be on PATH for the plots tests (Debian/Ubuntu: apt-get install gnuplot-nox)");
  REQUIRE(status == 0);
}

std::pair<int, std::string> run_plot_command(const std::vector<std::string>& args) {
  std::ostringstream captured;
  std::streambuf* const saved = std::cerr.rdbuf(captured.rdbuf());
  int status = -1;
  try {
    status = app::plot_command(args);
  } catch (...) {
    std::cerr.rdbuf(saved);
    throw;
  }
  std::cerr.rdbuf(saved);
  return {status, captured.str()};
}

std::string csv_line_with(std::vector<std::string> fields, std::size_t at, const std::string& field) {
  fields.insert(fields.begin() + std::ptrdiff_t(at), field);
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) s.push_back(',');
    s.append(normsim::io::csv_field(fields[i]));
  }
  s.push_back('\n');
  return s;
}

}  // namespace normsim::plots::test
