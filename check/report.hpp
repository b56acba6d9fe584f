// The files `normsim check` leaves in OUT, each written atomically (temp file, then rename):
//   verdicts.json          one object per claim (fields: docs/claims.md), read by plots/ and by people
//   report.md              one row per claim: statement, source, predicted, measured ± CI, verdict, figure
//   claims/<id>/data.csv   x,measured,se,predicted: what the claim's figure draws
//   claims/<id>/summary.csv  the claim's simulations over samples (sim's summary format)
//   summary.csv, run.json  every simulation of the check as one grid, so OUT is also a normsim results folder
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/claim.hpp"
#include "check/evaluate.hpp"
#include "check/measure.hpp"
#include "sim/backend.hpp"

namespace normsim::check {

struct CheckedClaim {
  ClaimSpec spec;
  Measurement measurement;
  ClaimResult result;
  double seconds = 0;
};

nlohmann::json verdict_json(const CheckedClaim& c);
// figures: whether figures/claim_<id>.png are drawn (links to them), or not (--no-plots: no dead links).
std::string report_markdown(const std::vector<CheckedClaim>& claims, bool full, double seconds, bool figures);
std::string data_csv(const ClaimResult& r);
// One line a claim kind ("- literature (...) (30): 20 supported, ..."): kinds are never added together.
std::string tally_by_kind(const std::vector<CheckedClaim>& claims);

// Writes every file above; `seconds` is the wall time recorded in the report and run.json.
void write_check_results(const std::filesystem::path& out, const std::vector<CheckedClaim>& claims, bool full,
                         const sim::Backend& backend, int threads, double seconds, bool figures);

}  // namespace normsim::check
