// Staged result files (see staged_folder.hpp).
#include "sim/run/staged_folder.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"

namespace normsim::sim {

namespace fs = std::filesystem;

StagedFolder::StagedFolder(const fs::path& out) : out_(out), stage_(io::temp_sibling(out / "staging")) {
  fs::create_directories(out_);
  // The caller holds OUT's lock, so any staging folder there is a killed writer's: remove it.
  for (const auto& e : fs::directory_iterator(out_))
    if (e.path().filename().string().rfind("staging.tmp.", 0) == 0) fs::remove_all(e.path());
  fs::create_directory(stage_);
}

StagedFolder::~StagedFolder() {
  std::error_code ec;
  fs::remove_all(stage_, ec);
}

void StagedFolder::commit(std::initializer_list<std::string_view> last) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(stage_)) entries.push_back(e.path().filename());
  const auto rank = [&](const fs::path& name) {
    const auto it = std::find(last.begin(), last.end(), name.string());
    return it == last.end() ? -1 : static_cast<int>(it - last.begin());
  };
  std::stable_sort(entries.begin(), entries.end(), [&](const fs::path& a, const fs::path& b) {
    return rank(a) < rank(b) || (rank(a) == rank(b) && a < b);
  });
  // A crash while the entries move must not leave the old finished-mark beside new files: it goes first.
  for (const auto name : last)
    if (fs::exists(stage_ / name)) fs::remove(out_ / name);
  for (const auto& name : entries) {
    if (fs::is_directory(out_ / name)) fs::remove_all(out_ / name);
    fs::rename(stage_ / name, out_ / name);  // one file system: a rename, whole or not at all
  }
}

}  // namespace normsim::sim
