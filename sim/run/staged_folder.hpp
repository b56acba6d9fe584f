// A results folder's files all or none: each is written into a staging folder inside OUT first
// (OUT/staging.tmp.<pid>, which a later run ignores as it ignores any temp file), and commit() moves them
// into OUT together. A failure before commit (a full disk, an unwritable file) leaves OUT as it was; the
// staging folder is removed. Used for a run's result files, Result.save and `normsim check`'s files.
#pragma once
#include <filesystem>
#include <initializer_list>
#include <string_view>

namespace normsim::sim {

class StagedFolder {
 public:
  // Creates OUT (if needed) and the staging folder, removing a killed writer's: the caller holds OUT's lock.
  explicit StagedFolder(const std::filesystem::path& out);
  ~StagedFolder();  // removes what was not committed
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Where to write: OUT/staging.tmp.<pid>.
  const std::filesystem::path& path() const { return stage_; }
  // Moves every entry of the staging folder into OUT, replacing an entry of the same name (a folder is
  // removed first, so a claims/ folder keeps no stale claim); the entries named in `last` move last, in that
  // order (run.json: the mark of a finished folder), and an old entry of those names is removed before any
  // entry moves, so a crash half way never leaves the old mark beside new files.
  void commit(std::initializer_list<std::string_view> last = {});

 private:
  std::filesystem::path out_, stage_;
};

}  // namespace normsim::sim
