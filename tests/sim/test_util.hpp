// Helpers shared by the edge tests: scratch folders and whole-file reads.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace normsim::test {

// Whether two doubles are the same bits (NaN equal to the same NaN; 0 and -0 different).
inline bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// A fresh, empty folder under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("normsim-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `normsim run CONFIG --out DIR/out --quiet --no-plots` and returns its exit status (-1: no exit).
inline int run_config(const std::string& config, const ScratchDir& dir) {
  const std::string cmd = std::string(NORMSIM_BINARY_DIR) + "/normsim run " + config + " --out " +
                          (dir / "out").string() + " --quiet --no-plots 2>" + (dir / "stderr").string();
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct CliResult {
  int status = -1;
  std::string out, err;
};

// Runs `normsim ARGS` (ARGS already shell-quoted) in a shell, after the shell command `before` (e.g. a
// ulimit), and captures its exit status and output in files of `dir`.
inline CliResult run_cli(const std::string& args, const ScratchDir& dir, const std::string& before = "") {
  const std::string cmd = (before.empty() ? "" : before + "; ") + std::string(NORMSIM_BINARY_DIR) +
                          "/normsim " + args + " >" + quote((dir / "stdout").string()) + " 2>" +
                          quote((dir / "stderr").string());
  const int rc = std::system(("/bin/sh -c " + quote(cmd)).c_str());
  CliResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = read_text(dir / "stdout");
  r.err = read_text(dir / "stderr");
  return r;
}

}  // namespace normsim::test
