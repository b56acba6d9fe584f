// Escaping of figure text for gnuplot's enhanced mode, LaTeX and gnuplot string literals (see text.hpp).
#include "text.hpp"

namespace normsim::plots {

std::string escape_enhanced(std::string_view text) {
  std::string out;
  for (char c : text) {
    // These start enhanced-text markup (sub/superscript, grouping, overprint, phantom box).
    if (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string escape_latex(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '_':
      case '%':
      case '&':
      case '#':
      case '$':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

Text plain_text(std::string_view text) {
  return {escape_enhanced(text), escape_latex(text)};
}

std::string gp_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    if (c == '\n') c = ' ';  // a string literal cannot span lines
    out += c;
  }
  return out + "'";
}

std::string gp_text(const Text& text) {
  if (text.enhanced == text.latex) return gp_quote(text.enhanced);
  return "(tex ? " + gp_quote(text.latex) + " : " + gp_quote(text.enhanced) + ")";
}

Text operator+(const Text& a, const Text& b) {
  return {a.enhanced + b.enhanced, a.latex + b.latex};
}

}  // namespace normsim::plots
