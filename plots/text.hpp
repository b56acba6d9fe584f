// Text that appears in a figure, in the two forms gnuplot needs: enhanced text for the PDF/SVG/PNG terminals
// and LaTeX for the cairolatex version, whose text is set by the paper's own fonts.
#pragma once

#include <string>
#include <string_view>

namespace normsim::plots {

struct Text {
  std::string enhanced;  // gnuplot enhanced-text markup (x_l, {/:Italic l}, UTF-8 symbols)
  std::string latex;     // LaTeX (math in $...$)
};

// Literal text: markup characters are escaped so they print as themselves in both forms.
Text plain_text(std::string_view text);

// Escapes for one form only.
std::string escape_enhanced(std::string_view text);
std::string escape_latex(std::string_view text);

// A gnuplot single-quoted string literal (inside single quotes only '' needs escaping; backslashes are kept).
std::string gp_quote(std::string_view text);

// A gnuplot expression choosing the form by the script's `tex` flag: (tex ? '<latex>' : '<enhanced>').
std::string gp_text(const Text& text);

Text operator+(const Text& a, const Text& b);

}  // namespace normsim::plots
