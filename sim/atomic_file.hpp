// Files that appear whole or not at all: written to `PATH.tmp.<pid>`, flushed to disk, then renamed over
// PATH. An interrupted writer leaves at most its temp file, never a truncated PATH.
#pragma once
#include <cstdio>
#include <filesystem>
#include <string_view>

namespace normsim::sim {

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

// Whether `name` is a temp file left by an AtomicFile (`*.tmp.<digits>`).
bool is_atomic_temp(const std::filesystem::path& name);

}  // namespace normsim::sim
