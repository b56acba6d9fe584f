// `normsim check [claim ...] [options]`: runs the claims of experiments/claims/, writes the verdicts, report,
// per-claim data and the claim figures (plots/). Exit status: 0 when every "self" claim (the
// project's theory against its own simulator) is supported or undecided, 1 when one is refuted (a bug in sim
// or theory), 2 for usage errors and malformed claim files. Refuted literature claims are findings, not
// failures.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace normsim::app {

// `args`: everything after the word `check`.
int check_command(const std::vector<std::string>& args);

// The claims of the default claims folder (./experiments/claims, else the source tree's), one line each
// ("id [kind] statement") or a Markdown table: `normsim list claims` and `normsim check --list`.
void list_claims(std::ostream& os, bool markdown);

}  // namespace normsim::app
