// The Markdown report (see report_markdown.hpp).
#include "report_markdown.hpp"

#include <algorithm>
#include <sstream>

#include "report_tables.hpp"

namespace normsim::plots {

namespace {

std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += (c == '\n') ? ' ' : c;
  }
  return out;
}

void write_markdown_table(std::ostringstream& md, const ReportTable& table) {
  if (table.rows.empty()) {
    md << "(none)\n\n";
    return;
  }
  md << "|";
  for (const auto& h : table.header) md << " " << cell(h) << " |";
  md << "\n|";
  for (std::size_t i = 0; i < table.header.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& row : table.rows) {
    md << "|";
    for (const auto& c : row) md << " " << cell(c) << " |";
    md << "\n";
  }
  md << "\n";
}

// The file a Markdown viewer can show inline: PNG, else SVG, else the first drawn file.
std::string shown_file(const RenderedFigure& figure) {
  for (const char* ext : {".png", ".svg", ".pdf"})
    for (const auto& file : figure.files)
      if (file == figure.name + ext) return file;
  return figure.files.front();
}

}  // namespace

std::string markdown_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures) {
  std::ostringstream md;
  md << "# normsim results: " << folder.dir.filename().string() << "\n\n"
     << "Figures are in `figures/`, each with the CSV it plots and the gnuplot script that draws it "
     << "(`cd figures && gnuplot NAME.gp`).\n\n";
  if (folder.has_verdicts) {
    md << "## Verdicts\n\n" << verdict_tally(folder) << ".\n\n";
    write_markdown_table(md, verdicts_table(folder));
  }
  md << "## Run\n\n";
  write_markdown_table(md, run_table(folder));
  md << "## Settings shared by every configuration\n\n";
  write_markdown_table(md, fixed_settings_table(folder));
  md << "## Configurations\n\n";
  write_markdown_table(md, configs_table(folder));
  md << "## Metrics\n\n";
  write_markdown_table(md, metrics_table(folder));
  if (const ReportTable nonfinite = nonfinite_table(folder); !nonfinite.rows.empty()) {
    md << "## Non-finite values\n\nLeft out of every figure and of summary.csv; each is listed in "
       << "[nonfinite.csv](nonfinite.csv).\n\n";
    write_markdown_table(md, nonfinite);
  }
  for (const auto& section : figure_sections(figures)) {
    md << "## " << section.heading << "\n\n";
    for (const RenderedFigure* figure : section.figures) {
      md << "### " << figure->name << "\n\n"
         << "![" << figure->name << "](figures/" << shown_file(*figure) << ")\n\n"
         << figure->caption << "\n\nFiles:";
      for (const auto& file : figure->files) md << " [" << file << "](figures/" << file << ")";
      md << "\n\n";
    }
  }
  return md.str();
}

}  // namespace normsim::plots
