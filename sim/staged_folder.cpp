// Staged result files (see staged_folder.hpp).
#include "sim/staged_folder.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace normsim::sim {

namespace fs = std::filesystem;

StagedFolder::StagedFolder(const fs::path& out)
    : out_(out), stage_(out / ("staging.tmp." + std::to_string(::getpid()))) {
  fs::create_directories(out_);
  fs::remove_all(stage_);  // a crashed earlier run of this pid's number
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
  for (const auto& name : entries) {
    if (fs::is_directory(out_ / name)) fs::remove_all(out_ / name);
    fs::rename(stage_ / name, out_ / name);  // one file system: a rename, whole or not at all
  }
  committed_ = true;
}

}  // namespace normsim::sim
