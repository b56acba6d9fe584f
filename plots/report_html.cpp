// The HTML report (see report_html.hpp).
#include "report_html.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "report_tables.hpp"

namespace normsim::plots {

namespace {

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* const page_style =
    "body{font-family:system-ui,sans-serif;max-width:75rem;margin:2rem auto;padding:0 1rem;color:#222}\n"
    "table{border-collapse:collapse;margin:0.5rem 0 1.5rem;font-size:0.85rem}\n"
    "th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;text-align:left;vertical-align:top}\n"
    "th{background:#f3f3f3} code{font-size:0.85rem} nav ul{columns:2;font-size:0.9rem}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(17rem,1fr));gap:1rem}\n"
    "figure{margin:0;border:1px solid #ddd;padding:0.5rem} figure img{width:100%;height:auto}\n"
    "figcaption{font-size:0.8rem;color:#444} .files{font-size:0.75rem}\n"
    // Verdicts: the word is always written out; the colour only helps the eye.
    ".supported{background:#dafbe1;color:#116329}.refuted{background:#ffebe9;color:#a40e26}\n"
    ".inconclusive{background:#fff8c5;color:#7d4e00}.untestable{background:#eaeef2;color:#424a53}\n"
    ".tally{font-weight:600}\n";

bool has_file(const RenderedFigure& figure, const std::string& file) {
  return std::find(figure.files.begin(), figure.files.end(), file) != figure.files.end();
}

// The class of a verdict cell: its first word, when it is one of the three judged verdicts (a reading's
// consistent / inconsistent take supported's and refuted's colours); "untestable" for a claim not testable at
// init or not judged.
std::string verdict_class(const std::string& verdict) {
  if (verdict.rfind("not testable at init", 0) == 0 || verdict.rfind("not judged", 0) == 0)
    return "untestable";
  const std::string word = verdict.substr(0, verdict.find(' '));
  if (word == "consistent")
    return "supported";  // with normsim's reading: the colour, not the word, is shared
  if (word == "inconsistent") return "refuted";
  return word == "supported" || word == "refuted" || word == "inconclusive" ? word : "";
}

// A table; `verdicts` colours its last column and links the first (the claim id) to the claim's figure.
void write_html_table(std::ostringstream& html, const ReportTable& table, bool verdicts = false) {
  if (table.rows.empty()) {
    html << "<p>(none)</p>\n";
    return;
  }
  html << "<table><thead><tr>";
  for (const auto& h : table.header) html << "<th>" << escape_html(h) << "</th>";
  html << "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    html << "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (verdicts && c == 0)
        html << "<td><a href=\"#claim_" << escape_html(row[c]) << "\"><code>" << escape_html(row[c])
             << "</code></a></td>";
      else if (verdicts && c + 1 == row.size())
        html << "<td class=\"" << verdict_class(row[c]) << "\">" << escape_html(row[c]) << "</td>";
      else
        html << "<td>" << escape_html(row[c]) << "</td>";
    }
    html << "</tr>\n";
  }
  html << "</tbody></table>\n";
}

// One thumbnail: the PNG (else the SVG) linked to itself, the caption, and links to every file.
void write_thumbnail(std::ostringstream& html, const RenderedFigure& figure) {
  html << "<figure id=\"" << escape_html(figure.name) << "\">";
  for (const char* ext : {".png", ".svg"})
    if (has_file(figure, figure.name + ext)) {
      const std::string href = "figures/" + escape_html(figure.name) + ext;
      html << "<a href=\"" << href << "\"><img loading=\"lazy\" alt=\"" << escape_html(figure.name)
           << "\" src=\"" << href << "\"></a>";
      break;
    }
  html << "\n<figcaption><b>" << escape_html(figure.name) << ".</b> " << escape_html(figure.caption)
       << "</figcaption>\n<div class=\"files\">";
  for (const auto& file : figure.files)
    html << "<a href=\"figures/" << escape_html(file) << "\">" << escape_html(file) << "</a> ";
  html << "</div></figure>\n";
}

std::string anchor(const std::string& heading) {
  std::string id;
  for (char c : heading) id += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c)) : '-';
  return id;
}

}  // namespace

std::string html_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures) {
  const std::string title = "normsim results: " + folder.dir.filename().string();
  const auto sections = figure_sections(figures);
  std::vector<std::pair<std::string, const ReportTable>> tables = {
      {"Run", run_table(folder)},
      {"Settings shared by every configuration", fixed_settings_table(folder)},
      {"Configurations", configs_table(folder)},
      {"Metrics", metrics_table(folder)}};
  if (ReportTable nonfinite = nonfinite_table(folder); !nonfinite.rows.empty())
    tables.emplace_back("Non-finite values (left out; see nonfinite.csv)", std::move(nonfinite));
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" << escape_html(title)
       << "</title>\n<style>\n"
       << page_style << "</style></head><body>\n<h1>" << escape_html(title) << "</h1>\n"
       << "<p>Every figure links its PNG, PDF and SVG, the data it plots (<code>figures/NAME.csv</code>) and "
       << "the gnuplot script that draws it (<code>cd figures &amp;&amp; gnuplot NAME.gp</code>).</p>\n";
  html << "<nav><h2>Contents</h2><ul>\n";
  if (folder.has_verdicts) html << "<li><a href=\"#verdicts\">Verdicts</a></li>\n";
  for (const auto& section : sections)
    html << "<li><a href=\"#" << anchor(section.heading) << "\">" << escape_html(section.heading) << "</a> ("
         << section.figures.size() << ")</li>\n";
  for (const auto& [heading, table] : tables)
    html << "<li><a href=\"#" << anchor(heading) << "\">" << escape_html(heading) << "</a></li>\n";
  html << "</ul></nav>\n";
  if (folder.has_verdicts) {
    html << "<h2 id=\"verdicts\">Verdicts</h2>\n<p class=\"tally\">" << escape_html(verdict_tally(folder))
         << "</p>\n";
    write_html_table(html, verdicts_table(folder), true);
  }
  for (const auto& section : sections) {
    html << "<h2 id=\"" << anchor(section.heading) << "\">" << escape_html(section.heading)
         << "</h2>\n<div class=\"grid\">\n";
    for (const RenderedFigure* figure : section.figures) write_thumbnail(html, *figure);
    html << "</div>\n";
  }
  for (const auto& [heading, table] : tables) {
    html << "<h2 id=\"" << anchor(heading) << "\">" << escape_html(heading) << "</h2>\n";
    write_html_table(html, table);
  }
  html << "</body></html>\n";
  return html.str();
}

}  // namespace normsim::plots
