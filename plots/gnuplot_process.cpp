// Locating and starting gnuplot (see gnuplot_process.hpp). fork + exec rather than std::system: no shell to
// quote for, a working directory per call, and no process-wide signal changes while other threads run.
#include "gnuplot_process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "plot_error.hpp"

namespace normsim::plots {

namespace fs = std::filesystem;

namespace {

bool is_executable_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

fs::path find_gnuplot() {
  if (const char* override_path = std::getenv("NORMSIM_GNUPLOT"); override_path && *override_path) {
    if (is_executable_file(override_path)) return override_path;
    throw environment_error(std::string("NORMSIM_GNUPLOT is set to '") + override_path +
                            "', which is not an executable file; point it at gnuplot or unset it");
  }
  const char* path_variable = std::getenv("PATH");
  const std::string path_list = path_variable ? path_variable : "";
  std::istringstream dirs(path_list);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "gnuplot";
    if (is_executable_file(candidate)) return candidate;
  }
  throw environment_error(
      "gnuplot was not found on PATH (" +
      (path_list.empty() ? std::string("PATH is empty") : "PATH=" + path_list) +
      "); normsim draws its figures with gnuplot 5.4 or newer. Install it (Debian/Ubuntu: apt-get install "
      "gnuplot-nox; macOS: brew install gnuplot), add its folder to PATH, or set NORMSIM_GNUPLOT to its "
      "path. "
      "The results themselves are complete; run `normsim plot OUT` once gnuplot is there");
}

GnuplotResult run_gnuplot(const fs::path& gnuplot, const fs::path& dir, const std::string& script) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls are allowed.
  const std::string program = gnuplot.string();
  // Absolute, because the child changes into `dir` before it opens the log (a relative OUT broke this).
  const fs::path abs_dir = fs::absolute(dir);
  const std::string work_dir = abs_dir.string();
  const std::string log = (abs_dir / ".gnuplot.log").string();
  std::vector<char*> argv = {const_cast<char*>(program.c_str()), const_cast<char*>(script.c_str()), nullptr};

  const pid_t pid = ::fork();
  if (pid < 0)
    throw environment_error("cannot start gnuplot: fork failed (errno " + std::to_string(errno) + ")");
  if (pid == 0) {
    if (::chdir(work_dir.c_str()) != 0) ::_exit(126);
    const int null_in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (null_in < 0 || out < 0) ::_exit(126);
    ::dup2(null_in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw environment_error("lost track of gnuplot (waitpid failed)");

  GnuplotResult result;
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  result.output = text.str();
  std::error_code ignored;
  fs::remove(log, ignored);
  return result;
}

}  // namespace normsim::plots
