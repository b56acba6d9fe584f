// A child process that can be stopped: `normsim check` runs a claim's PyTorch block as `python3 -m
// normsim._claim_block` (check/torch_block.cpp), which may hang or be killed. The child runs in its own
// process group, with a time limit; a SIGINT, SIGTERM or SIGHUP that reaches normsim while it waits stops the
// whole group and is then delivered to normsim as before (its default action), so nothing is left behind.
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>

namespace normsim::check {

struct ChildOutcome {
  int exit_status = -1;    // the child's exit status; -1 when it was stopped (signal, time limit)
  bool timed_out = false;  // stopped at the time limit
  int signal = 0;          // stopped because normsim received this signal: the caller cleans up, then
                           // calls redeliver(signal)
};

// Runs `/bin/sh -c command` with stdout and stderr to `log`, for at most `timeout_seconds` (> 0).
ChildOutcome run_child(const std::string& command, const std::filesystem::path& log, double timeout_seconds);

// Delivers `signal` again under the action normsim had before the child ran, once the caller has cleaned
// up: the CLI's default action ends normsim; Python's handler returns and raises KeyboardInterrupt at its
// next check, so the caller then throws Interrupted to unwind to it.
void redeliver(int signal);

class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace normsim::check
