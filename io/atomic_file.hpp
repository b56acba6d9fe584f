// Files that appear whole or not at all: written to `PATH.tmp.<pid>`, flushed to disk, then renamed over
// PATH. An interrupted writer leaves at most its temp file, never a truncated PATH. The one definition for
// every layer (sim's result files, check's reports, plots' figures and reports).
#pragma once
#include <cstdio>
#include <filesystem>
#include <string_view>

namespace normsim::io {

class AtomicFile {
 public:
  // Opens the temp file beside `path`; throws std::system_error naming the path.
  explicit AtomicFile(std::filesystem::path path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Removes the temp file unless commit() succeeded.
  ~AtomicFile();

  void write(std::string_view text);
  // fsync, close, rename to the final path, fsync the folder. Throws std::system_error on failure.
  void commit();

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_, tmp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// Writes `text` to `path` atomically.
void write_file_atomic(const std::filesystem::path& path, std::string_view text);

// This process's temp name for `path`: `PATH.tmp.<pid>`, what AtomicFile writes first; also a staging
// folder's name, so that a later run recognises a killed writer's leftovers by one rule (is_atomic_temp).
std::filesystem::path temp_sibling(const std::filesystem::path& path);

// Whether `name` is a temp name of some process (`*.tmp.<digits>`), such as an AtomicFile leaves.
bool is_atomic_temp(const std::filesystem::path& name);

}  // namespace normsim::io
