// Exclusive use of a results folder for a run's lifetime: OUT/normsim.lock, held with flock(2) and
// holding the holder's pid, host and start time. A second run on the same OUT (with or without --force
// or --resume) is refused while the first is alive; the kernel drops the lock of a process that died,
// so a stale lock file never blocks anyone.
#pragma once
#include <filesystem>
#include <string_view>

namespace normsim::sim {

inline constexpr std::string_view kLockFileName = "normsim.lock";

class OutLock {
 public:
  // Takes the lock of `out` (a folder that exists). Throws SweepError naming the holder when another
  // process has it.
  explicit OutLock(const std::filesystem::path& out);
  ~OutLock();  // removes the lock file and releases the lock
  OutLock(const OutLock&) = delete;
  OutLock& operator=(const OutLock&) = delete;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace normsim::sim
