// The folder a check writes into, ready under the same rule as `normsim run --out`: a folder that already
// holds results is refused unless the caller asked to replace them (--force, force=True).
#pragma once

#include <filesystem>
#include <memory>

#include "sim/run/out_lock.hpp"

namespace normsim::check {

// Creates OUT if absent and locks it (a second writer is refused at once, naming the first). OUT holding
// anything but a lock file or stale temporaries is refused with sim::SweepError (exit 2: usage) unless
// `force`, which discards the files a check writes there (report.md, report.html, verdicts.json, run.json,
// summary.csv, claims/, figures/) and keeps anything else. A refused OUT is left as it was; a folder this
// call made is removed.
std::unique_ptr<sim::OutLock> lock_check_out(const std::filesystem::path& out, bool force);

}  // namespace normsim::check
