// The checks of a Config's expressions and rules (block, branch_scale, norm_alpha, norm_shift, param_rules):
// each parses, reads only names an expression may read, and, for a parametrization, resolves to numbers the
// draws can use. The key table (sim/run/config_schema.cpp) runs them; the model evaluates what they let
// through.
#pragma once
#include <string>
#include <vector>

#include "sim/run/config_schema.hpp"

namespace normsim::sim {

// Why `name` is not a number an expression can read ("" when it is).
std::string unknown_parameter(const std::string& name);
// A block expression ("" = none): why it does not parse, names something it may not read, or has a dead
// branch; "" when none of these.
std::string check_block(const KeyValue& v);
// A scalar expression (branch_scale, norm_alpha, norm_shift): why it does not parse or reads an unknown
// name, or "".
std::string check_scalar_expression(const KeyValue& v);
// Why param_rules' text is refused on its own (a parse error with its column, a name that is no numeric
// key), or "".
std::string check_param_rules(const KeyValue& text);
// The combinations a parametrization refuses: rules without one, an optimizer step with steps = 0, an std or
// multiplier that is not a finite number >= 0, a param_rules rule for an edge matrix the stack lacks.
std::vector<ConfigIssue> parametrization_issues(const Config& c);

}  // namespace normsim::sim
