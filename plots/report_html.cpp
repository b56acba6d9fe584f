// The self-contained HTML report (see report_html.hpp).
#include "report_html.hpp"

#include <fstream>
#include <sstream>

#include "report_tables.hpp"

namespace normsim::plots {

namespace fs = std::filesystem;

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

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void write_table(std::ostringstream& html, const ReportTable& table, const char* css_class = "") {
  if (table.rows.empty()) {
    html << "<p>(none)</p>\n";
    return;
  }
  html << "<table class=\"" << css_class << "\"><thead><tr>";
  for (const auto& h : table.header) html << "<th>" << escape_html(h) << "</th>";
  html << "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    html << "<tr>";
    for (const auto& c : row) html << "<td>" << escape_html(c) << "</td>";
    html << "</tr>\n";
  }
  html << "</tbody></table>\n";
}

bool has_file(const RenderedFigure& figure, const std::string& file) {
  for (const auto& f : figure.files)
    if (f == file) return true;
  return false;
}

// The figure itself: PNG as a data URL (identical in every browser), else the SVG inline without its XML
// prolog, else a note that only PDF was drawn.
std::string embedded_figure(const fs::path& dir, const RenderedFigure& figure) {
  if (has_file(figure, figure.name + ".png"))
    return "<img alt=\"" + escape_html(figure.name) + "\" src=\"data:image/png;base64," +
           base64(read_bytes(dir / (figure.name + ".png"))) + "\">";
  if (has_file(figure, figure.name + ".svg")) {
    const std::string svg = read_bytes(dir / (figure.name + ".svg"));
    const auto start = svg.find("<svg");
    return "<div class=\"svg\">" + (start == std::string::npos ? svg : svg.substr(start)) + "</div>";
  }
  return "<p>(drawn as PDF only: figures/" + escape_html(figure.name) + ".pdf)</p>";
}

}  // namespace

std::string base64(const std::string& bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const unsigned b0 = static_cast<unsigned char>(bytes[i]);
    const unsigned b1 = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const unsigned b2 = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const unsigned triple = (b0 << 16) | (b1 << 8) | b2;
    out += alphabet[(triple >> 18) & 63];
    out += alphabet[(triple >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(triple >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[triple & 63] : '=';
  }
  return out;
}

std::string html_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures) {
  const fs::path figures_dir = folder.dir / "figures";
  const std::string title = "normsim results: " + folder.dir.filename().string();
  std::ostringstream html;
  html
      << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" << escape_html(title)
      << "</title>\n<style>\n"
      << "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}\n"
      << "table{border-collapse:collapse;margin:0.5rem 0 1.5rem;font-size:0.9rem}\n"
      << "th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;text-align:left;vertical-align:top}\n"
      << "th{background:#f3f3f3} figure{margin:1.5rem 0} img,.svg svg{max-width:100%;height:auto}\n"
      << "figcaption{font-size:0.9rem;color:#444} code{font-size:0.85rem}\n"
      << "</style></head><body>\n<h1>" << escape_html(title) << "</h1>\n"
      << "<p>Every figure has its data (<code>figures/NAME.csv</code>) and the gnuplot script that draws it "
      << "(<code>cd figures &amp;&amp; gnuplot NAME.gp</code>).</p>\n";
  if (folder.has_verdicts) {
    html << "<h2>Verdicts</h2>\n";
    write_table(html, verdicts_table(folder), "verdicts");
  }
  html << "<h2>Run</h2>\n";
  write_table(html, run_table(folder));
  html << "<h2>Settings shared by every configuration</h2>\n";
  write_table(html, fixed_settings_table(folder));
  html << "<h2>Configurations</h2>\n";
  write_table(html, configs_table(folder));
  html << "<h2>Metrics</h2>\n";
  write_table(html, metrics_table(folder));
  for (const auto& section : figure_sections(figures)) {
    html << "<h2>" << escape_html(section.heading) << "</h2>\n";
    for (const RenderedFigure* figure : section.figures)
      html << "<figure id=\"" << escape_html(figure->name) << "\">" << embedded_figure(figures_dir, *figure)
           << "\n<figcaption><b>" << escape_html(figure->name) << ".</b> " << escape_html(figure->caption)
           << "</figcaption></figure>\n";
  }
  html << "</body></html>\n";
  return html.str();
}

}  // namespace normsim::plots
