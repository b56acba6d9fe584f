// Writing both reports (see report.hpp).
#include "report.hpp"

#include "atomic_file.hpp"
#include "report_html.hpp"
#include "report_markdown.hpp"

namespace normsim::plots {

void write_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures, bool markdown) {
  if (markdown) write_file_atomically(folder.dir / "report.md", markdown_report(folder, figures));
  write_file_atomically(folder.dir / "report.html", html_report(folder, figures));
}

}  // namespace normsim::plots
