// A parametrization's rules as text (docs/design/parametrization.md 3.1; docs/parametrizations.md):
//   rules    := rule (';' rule)*
//   rule     := selector+ ':' field '=' expr (',' field '=' expr)*
//   selector := embedding | readout | a weight kind (w1 w2 wgate wq wk wv wo wga wrouter cq ck cv co)
//             | hidden | in_proj | out_proj | all | branch
//   field    := std | mult | lr_sgd | lr_adam | eps      (branch: mult only)
// Each expr is a number-valued expression of the block language (vocab/block_expr.hpp) read in the matrix
// scope (fan_in, fan_out besides k, K, b, L, m_N, m_L and numeric keys). Later rules override earlier ones.
// Parsed once at the config's edge; sim/parametrization.hpp evaluates the rules per matrix.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "vocab/block_expr.hpp"

namespace normsim::vocab {

enum class ParamField { std, mult, lr_sgd, lr_adam, eps };

// One "field = expr" of a rule, with the selectors it applies to.
struct ParamAssignment {
  std::vector<std::string> selectors;  // as written, each a known selector
  ParamField field = ParamField::std;
  Expr value;
  int column = 1;           // 1-based, of the expression in the whole text
  int selector_column = 1;  // of the rule's first selector
};

// The selectors that name one matrix kind or a group of them, in the order docs list them.
const std::vector<std::string_view>& param_selectors();
// The matrices outside the residual branches (docs/design/parametrization.md 3.4).
inline bool is_edge_selector(std::string_view s) {
  return s == "embedding" || s == "readout";
}
std::string_view field_name(ParamField f);

// Every assignment of `text` in written order; throws ExprError with the column of a bad token, an unknown
// selector or field, or a field the branch selector does not have.
std::vector<ParamAssignment> parse_param_rules(std::string_view text);

}  // namespace normsim::vocab
