// OUT of a check (see check_out.hpp).
#include "check/check_out.hpp"

#include <array>
#include <string_view>

#include "sim/run/sweep.hpp"

namespace normsim::check {

namespace fs = std::filesystem;

namespace {

// Everything a check writes into OUT (what force discards).
constexpr std::array<std::string_view, 7> kCheckOutputs{
    "report.md", "report.html", "verdicts.json", "run.json", "summary.csv", "claims", "figures"};

}  // namespace

std::unique_ptr<sim::OutLock> lock_check_out(const fs::path& out, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw sim::SweepError(out.string() + " exists and is not a folder");
  const bool created = !fs::exists(out, ec);
  fs::create_directories(out);
  std::unique_ptr<sim::OutLock> lock;
  try {
    lock = std::make_unique<sim::OutLock>(out);
    if (!created && sim::holds_results(out)) {
      if (!force)
        throw sim::SweepError(out.string() + " is not empty (an earlier check's results?); use --force " +
                              "(Python: force=True) to replace them, or another --out");
      for (auto name : kCheckOutputs) fs::remove_all(out / name);
    }
  } catch (...) {
    lock.reset();
    if (created) fs::remove_all(out, ec);
    throw;
  }
  return lock;
}

}  // namespace normsim::check
