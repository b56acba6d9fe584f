// Writing both reports (see report.hpp).
#include "report.hpp"

#include "io/atomic_file.hpp"
#include "io_errors.hpp"
#include "report_html.hpp"
#include "report_markdown.hpp"

namespace normsim::plots {

void write_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures, bool markdown) {
  if (markdown) {
    const std::string text = markdown_report(folder, figures);
    as_plot_error([&] { io::write_file_atomic(folder.dir / "report.md", text); });
  }
  const std::string html = html_report(folder, figures);
  as_plot_error([&] { io::write_file_atomic(folder.dir / "report.html", html); });
}

}  // namespace normsim::plots
