#include "sim/run/out_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sim/run/results.hpp"
#include "sim/run/sweep.hpp"

namespace normsim::sim {

namespace {

std::string holder_of(int fd) {
  char buf[256] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string s(buf, n > 0 ? std::size_t(n) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "another normsim process" : s;
}

// Whether fd is still the file at `path` (a previous holder may have removed it between our open and our
// flock; then the lock we got protects nothing).
bool still_linked(int fd, const std::filesystem::path& path) {
  struct stat a {
  }, b{};
  return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

std::string identity() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return "normsim pid " + std::to_string(getpid()) + " on " + host + " since " + utc_now_iso8601() + "\n";
}

}  // namespace

OutLock::OutLock(const std::filesystem::path& out) : path_(out / kLockFileName) {
  for (;;) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw SweepError("cannot create " + path_.string() + ": " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string who = holder_of(fd_);
      close(fd_);
      if (err != EWOULDBLOCK) throw SweepError("cannot lock " + path_.string() + ": " + std::strerror(err));
      throw SweepError(out.string() + " is in use by " + who + " (" + path_.string() +
                       "); wait for that run to finish or stop it, or use another --out");
    }
    if (still_linked(fd_, path_)) break;
    close(fd_);
  }
  // Without this note the lock still holds; only a refused run's message would lack the holder's pid.
  const std::string me = identity();
  if (ftruncate(fd_, 0) == 0) (void)!pwrite(fd_, me.data(), me.size(), 0);
}

OutLock::~OutLock() {
  unlink(path_.c_str());  // before releasing: a waiting process then finds the file gone and retries
  close(fd_);
}

}  // namespace normsim::sim
