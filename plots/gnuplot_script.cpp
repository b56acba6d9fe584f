// The shared .gp frame (see gnuplot_script.hpp). Kept plain so a user can read and edit the script.
#include "gnuplot_script.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "palette.hpp"

namespace normsim::plots {

std::string script_formats(const PlotOptions& options) {
  std::string formats;
  for (const auto& format : options.formats) formats += (formats.empty() ? "" : " ") + format;
  if (options.latex) formats += (formats.empty() ? "" : " ") + std::string("tex");
  return formats;
}

std::vector<std::string> format_outputs(const std::string& name, const std::string& format) {
  // cairolatex writes its graphics beside the .tex under the same stem, so the stem differs from the PDF's.
  if (format == "tex") return {name + "-tex.tex", name + "-tex.pdf"};
  return {name + "." + format};
}

std::string gnuplot_script(const ScriptSpec& spec, const PlotOptions& options) {
  SizeInches size = size_inches(options.size);
  const bool stacked = spec.panels > 1 && size.width < stacked_below_width;
  if (spec.facets && stacked)
    size.height = facet_panel_height * spec.panels;
  else if (spec.facets)
    size.height = std::max(size.height, stacked_panel_height * ((spec.panels + 1) / 2));
  else if (stacked)
    size.height = stacked_panel_height * spec.panels;
  std::ostringstream gp;
  gp << "# " << spec.description << "\n"
     << "# Drawn by normsim from " << spec.name << ".csv (" << spec.columns << ").\n"
     << "# Re-render after editing any line:  cd <this folder> && gnuplot " << spec.name << ".gp\n\n"
     << "name = '" << spec.name << "'\n"
     << "data = name.'.csv'\n"
     << "formats = '" << script_formats(options) << "'  # any of: pdf svg png tex (tex: cairolatex, writes "
     << spec.name << "-tex.tex + " << spec.name << "-tex.pdf)\n"
     << "width_in = " << size.width << "; height_in = " << size.height
     << (spec.panels > 1 ? "  # one-column 3.5 x (1.6 per panel), two-column 7 x 3.2\n"
                         : "  # one-column 3.5 x 2.6, two-column 7 x 3.2\n")
     << "font = '" << figure_font << "'; fontsize = " << figure_font_size
     << "  # pdf/svg/png only (Debian: fonts-liberation2); the tex version uses the paper's fonts\n"
     << "png_dpi = " << png_dpi << "\n"
     << (spec.panels > 1 ? "stacked = (width_in < " + std::to_string(int(stacked_below_width)) +
                               ")  # panels one above the other on narrow figures, else side by side\n"
                         : std::string())
     << "\n"
     << "set encoding utf8\n"
     << "set minussign\n"
     << "set datafile separator comma\n"
     << "set datafile missing ''\n"
     << gp_line_styles() << "\n"
     << "set border 3 lw 1\n"
     << "set tics nomirror out scale 0.6\n"
     << "set key samplen 2.5 spacing 1.1 noautotitle\n\n"
     << spec.preamble << "\n"
     << "do for [fmt in formats] {\n"
     << "  if (strstrt(' pdf svg png tex ', ' '.fmt.' ') == 0) {\n"
     << "    exit error 'unknown format '.fmt.' in formats: use pdf, svg, png or tex'\n"
     << "  }\n"
     << "  tex = (fmt eq 'tex')\n"
     << "  gpfont = sprintf('%s,%g', font, fontsize)\n"
     // One scale for all three: text at `fontsize` points and line width 1 = 0.5 pt, markers alike.
     // pdfcairo sets text at 4/3 x fontscale x the font's size, hence 0.75; pngcairo's pixel sizes
     // follow png_dpi (measured: a rasterized PDF and the PNG agree in text, line and marker size).
     << "  if (fmt eq 'pdf') {\n"
     << "    set terminal pdfcairo enhanced color size width_in,height_in font gpfont fontscale 0.75\n"
     << "  }\n"
     << "  if (fmt eq 'svg') {\n"
     << "    set terminal svg enhanced size width_in*72,height_in*72 dynamic font gpfont linewidth 0.5\n"
     << "  }\n"
     << "  if (fmt eq 'png') {\n"
     << "    set terminal pngcairo enhanced color size int(width_in*png_dpi+0.5),int(height_in*png_dpi+0.5) "
        "\\\n"
     << "      font gpfont fontscale png_dpi/96.0 linewidth png_dpi/144.0 pointscale png_dpi/72.0\n"
     << "  }\n"
     << "  if (tex) { set terminal cairolatex pdf input color size width_in,height_in }\n"
     << "  set output (tex ? name.'-tex.tex' : name.'.'.fmt)\n"
     << "  set format x (tex ? '$%g$' : '%g')\n"
     << "  set format y (tex ? '$%g$' : '%g')\n"
     << "  set format cb (tex ? '$%g$' : '%g')\n";
  std::istringstream body(spec.body);
  for (std::string line; std::getline(body, line);) gp << (line.empty() ? "" : "  ") << line << "\n";
  gp << "  unset output\n"
     << "}\n";
  return gp.str();
}

}  // namespace normsim::plots
