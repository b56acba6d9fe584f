// Running a child in its own process group with a time limit (see child_process.hpp).
#include "check/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace normsim::check {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void note_signal(int sig) {
  g_stop_signal = sig;
}

// While it lives, SIGINT, SIGTERM and SIGHUP are noted instead of ending normsim; the old actions come back
// at its end.
class SignalsNoted {
 public:
  SignalsNoted() {
    g_stop_signal = 0;
    struct sigaction noted {};
    noted.sa_handler = note_signal;
    sigemptyset(&noted.sa_mask);
    for (int i = 0; i < 3; ++i) {
      sigaction(kSignals[i], nullptr, &old_[i]);
      // An ignored signal stays ignored (nohup's SIGHUP): it would not have stopped normsim either.
      replaced_[i] = old_[i].sa_handler != SIG_IGN;
      if (replaced_[i]) sigaction(kSignals[i], &noted, nullptr);
    }
  }
  ~SignalsNoted() {
    for (int i = 0; i < 3; ++i)
      if (replaced_[i]) sigaction(kSignals[i], &old_[i], nullptr);
  }
  SignalsNoted(const SignalsNoted&) = delete;
  SignalsNoted& operator=(const SignalsNoted&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3];
  bool replaced_[3] = {false, false, false};
};

// Stops the group: SIGTERM, then SIGKILL if it has not ended within 2 s; reaps the child.
void stop_group(pid_t pid) {
  ::kill(-pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // anything of the group still alive (a grandchild)
}

}  // namespace

ChildOutcome run_child(const std::string& command, const std::filesystem::path& log, double timeout_seconds) {
  const SignalsNoted noted;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start a child process");
  if (pid == 0) {  // the child: its own group, output to the log, then the shell
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists whichever process runs first
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  ChildOutcome out;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (g_stop_signal != 0) {
      stop_group(pid);
      out.signal = g_stop_signal;
      return out;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop_group(pid);
      out.timed_out = true;
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // a grandchild left running in the group
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

void redeliver(int signal) {
  std::raise(signal);  // under the action normsim had before the child ran
}

}  // namespace normsim::check
