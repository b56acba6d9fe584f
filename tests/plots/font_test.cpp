// The pinned font at the size the script asks for: read back from a drawn PDF with poppler's pdffonts and
// pdftotext (scripts/setup.sh installs poppler-utils), from the SVG's attributes, and the PNG terminal's
// scale factors from the script (the three formats share one scale: docs/figures.md, "Sizes").
#include <catch2/catch.hpp>
#include <cstdio>
#include <regex>
#include <string>

#include "plots/gnuplot_script.hpp"
#include "plots/render_folder.hpp"
#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots;
using namespace normsim::plots::test;

namespace {

std::string command_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  INFO(command << " (poppler-utils must be installed: scripts/setup.sh)");
  REQUIRE(::pclose(pipe) == 0);
  return out;
}

// The height of `word`'s box in pdftotext's layout, in points: the font's ascent plus descent times its size.
double word_height(const std::string& bbox_html, const std::string& word) {
  const std::regex pattern(R"re(yMin="([0-9.]+)" xMax="[0-9.]+" yMax="([0-9.]+)">)re" + word + "</word>");
  std::smatch match;
  INFO("word '" << word << "' in pdftotext -bbox output");
  REQUIRE(std::regex_search(bbox_html, match, pattern));
  return std::stod(match[2]) - std::stod(match[1]);
}

}  // namespace

TEST_CASE("PDF text is the pinned font at the size the script asks for", "[plots][font]") {
  require_gnuplot();
  TempDir dir("font");
  write_results_folder(dir.path());
  PlotOptions options;
  options.quiet = true;
  options.metrics = {"act_sq"};
  render_folder(dir.path(), options);
  const fs::path pdf = dir.path() / "figures" / "profile_act_sq_depth-8.pdf";

  // Every font in the PDF is Liberation Sans (regular or italic): nothing fell back to another family.
  const std::string fonts = command_output("pdffonts '" + pdf.string() + "'");
  CHECK(fonts.find("LiberationSans") != std::string::npos);
  std::size_t font_lines = 0;
  for (std::size_t at = fonts.find('+'); at != std::string::npos; at = fonts.find('+', at + 1)) {
    ++font_lines;
    CHECK(fonts.compare(at + 1, 14, "LiberationSans") == 0);
  }
  CHECK(font_lines > 0);

  // Liberation Sans's ascent + descent is 1.117 em (0.905 + 0.212), so a word's box height / 1.117 is its
  // size. The axis label is set at fontsize (8 pt), the legend one point smaller; before the fix gnuplot's
  // pdfcairo default fontscale set 8 pt text at 5.3 pt. Tolerance: pdftotext prints 6 decimals; 0.1 pt.
  const std::string boxes = command_output("pdftotext -bbox '" + pdf.string() + "' -");
  constexpr double em_height = 1.117;
  CHECK(word_height(boxes, "layer") / em_height == Approx(figure_font_size).margin(0.1));
  CHECK(word_height(boxes, "Pre") / em_height == Approx(figure_font_size - 1).margin(0.1));

  // The SVG names the font and its size in points (its user unit is 1/72 in).
  const std::string svg = read_text(dir.path() / "figures" / "profile_act_sq_depth-8.svg");
  CHECK(svg.find("font-family=\"Liberation Sans\"") != std::string::npos);
  CHECK(svg.find("font-size=\"8.00\"") != std::string::npos);

  // The script pins the font and scales the PNG to the PDF's text, line and marker size (measured: the PDF
  // rasterized at png_dpi and the PNG agree within a pixel in text width, line width and marker size).
  const std::string gp = read_text(dir.path() / "figures" / "profile_act_sq_depth-8.gp");
  CHECK(gp.find("font = 'Liberation Sans'; fontsize = 8") != std::string::npos);
  CHECK(gp.find("pdfcairo enhanced color size width_in,height_in font gpfont fontscale 0.75") !=
        std::string::npos);
  CHECK(gp.find("font gpfont fontscale png_dpi/96.0 linewidth png_dpi/144.0 pointscale png_dpi/72.0") !=
        std::string::npos);
  CHECK(gp.find("dynamic font gpfont linewidth 0.5") != std::string::npos);
}
