// AtomicFile: temp file, fsync, rename, fsync of the folder (so the rename itself survives a crash).
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <system_error>

namespace normsim::io {

namespace {
[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path.string());
}
}  // namespace

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)), tmp_(temp_sibling(path_)) {
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) fail("cannot create", tmp_);
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_) {
    std::error_code ignored;
    std::filesystem::remove(tmp_, ignored);
  }
}

void AtomicFile::write(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) fail("cannot write", tmp_);
}

void AtomicFile::commit() {
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) fail("cannot flush", tmp_);
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) fail("cannot close", tmp_);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot rename onto", path_);
  committed_ = true;
  const auto dir = path_.has_parent_path() ? path_.parent_path() : std::filesystem::path(".");
  if (const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); fd >= 0) {
    ::fsync(fd);  // best effort: some file systems refuse fsync on folders
    ::close(fd);
  }
}

void write_file_atomic(const std::filesystem::path& path, std::string_view text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

std::filesystem::path temp_sibling(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  return tmp;
}

bool is_atomic_temp(const std::filesystem::path& name) {
  const std::string s = name.filename().string();
  const auto dot = s.rfind(".tmp.");
  if (dot == std::string::npos || dot + 5 == s.size()) return false;
  return s.find_first_not_of("0123456789", dot + 5) == std::string::npos;
}

}  // namespace normsim::io
