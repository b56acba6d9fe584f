// Staged, parallel drawing of figures (see render_figures.hpp).
#include "render_figures.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "gnuplot_process.hpp"
#include "io/atomic_file.hpp"
#include "io_errors.hpp"
#include "plot_error.hpp"

namespace normsim::plots {

namespace fs = std::filesystem;

namespace {

// Removes a staging folder however the drawing ends.
struct StagingFolder {
  fs::path path;
  ~StagingFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// The last lines of gnuplot's output: the error is at the end, after any warnings.
std::string tail(const std::string& text, std::size_t max_chars = 1500) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

RenderedFigure render_one(const Figure& figure, const fs::path& figures_dir, const PlotOptions& options,
                          const fs::path& gnuplot) {
  StagingFolder staging{io::temp_sibling(figures_dir / figure.name)};
  std::error_code error;
  fs::create_directory(staging.path, error);
  if (error) throw environment_error("cannot create " + staging.path.string() + ": " + error.message());

  const std::string csv = figure.name + ".csv", gp = figure.name + ".gp";
  const std::string script = gnuplot_script(figure.script, options);
  as_plot_error([&] {
    io::write_file_atomic(staging.path / csv, figure.csv);
    io::write_file_atomic(staging.path / gp, script);
  });

  const GnuplotResult result = run_gnuplot(gnuplot, staging.path, gp);
  if (result.exit_status != 0)
    throw environment_error("gnuplot failed on " + gp + " (exit status " +
                            std::to_string(result.exit_status) + "):\n" + tail(result.output));

  RenderedFigure rendered{figure.name, figure.kind, figure.caption, {csv, gp}};
  std::vector<std::string> formats = options.formats;
  if (options.latex) formats.push_back("tex");
  for (const auto& format : formats)
    for (const auto& file : format_outputs(figure.name, format)) {
      if (!fs::is_regular_file(staging.path / file) || fs::file_size(staging.path / file) == 0)
        throw environment_error("gnuplot ran " + gp + " but wrote no " + file + "; its output was:\n" +
                                tail(result.output));
      rendered.files.push_back(file);
    }
  // Drawn outputs first, the csv and script last: a reader never finds a script whose figure is missing.
  std::rotate(rendered.files.begin(), rendered.files.begin() + 2, rendered.files.end());
  for (const auto& file : rendered.files) {
    fs::rename(staging.path / file, figures_dir / file, error);
    if (error)
      throw environment_error("cannot move " + file + " into " + figures_dir.string() + ": " +
                              error.message());
  }
  return rendered;
}

}  // namespace

std::vector<RenderedFigure> render_figures(const std::vector<Figure>& figures, const fs::path& figures_dir,
                                           const PlotOptions& options, const fs::path& gnuplot) {
  std::vector<std::optional<RenderedFigure>> done(figures.size());
  std::vector<std::string> failures(figures.size());
  std::atomic<std::size_t> next{0};
  std::mutex print;

  // One gnuplot per core: drawing is CPU-bound and each figure is independent.
  auto worker = [&] {
    for (std::size_t i = next++; i < figures.size(); i = next++) {
      try {
        done[i] = render_one(figures[i], figures_dir, options, gnuplot);
        if (options.verbose && !options.quiet) {
          const std::lock_guard lock(print);
          std::cerr << "  figures/" << figures[i].name << " (" << figures[i].kind << ")\n";
        }
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                                      std::max<std::size_t>(figures.size(), 1));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();

  std::vector<RenderedFigure> rendered;
  std::string message;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    if (done[i]) rendered.push_back(std::move(*done[i]));
    if (!failures[i].empty() && ++failed <= 3) message += "\n" + figures[i].name + ": " + failures[i];
  }
  if (failed > 0)
    throw environment_error(std::to_string(failed) + " of " + std::to_string(figures.size()) +
                            " figures could not be drawn (the others were written):" + message +
                            (failed > 3 ? "\n..." : ""));
  return rendered;
}

}  // namespace normsim::plots
