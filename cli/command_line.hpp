// The command-line layer shared by `normsim run`, `list`, `check` and `plot`: one parser (CLI11), one help
// style, the flags every command has (-q/--quiet, -v/--verbose, -h/--help), one usage-error message form
// ("normsim COMMAND: what (normsim COMMAND --help)") and one map from exceptions to exit statuses:
// 0 ok, 2 usage or bad input, 1 runtime failure.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "vocab/enums.hpp"

namespace normsim::cli {

// Wrong arguments: exit status 2, printed as "normsim COMMAND: MESSAGE (normsim COMMAND --help)".
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input found after parsing (a results folder that is not one, say): exit status 2, printed as
// "normsim COMMAND: MESSAGE".
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What -q/--quiet and -v/--verbose ask for; every command has both.
struct Verbosity {
  bool quiet = false;    // no progress output
  bool verbose = false;  // a line per step (configuration, figure, claim)
};

// A command's parser in the project's help style, with -h/--help; `command` is the word after normsim.
std::unique_ptr<CLI::App> make_command(const std::string& command, const std::string& description);

// Adds -q/--quiet and -v/--verbose.
void add_verbosity(CLI::App& app, Verbosity& verbosity);

// Adds --backend auto|cpu|cuda|reference and --threads N (N >= 0; 0: OMP_NUM_THREADS if set, else all cores),
// as `run` and `check` take them.
// --threads takes 0..max_threads (sim::kMaxThreads: the caller knows the backends, this layer does not).
void add_backend_options(CLI::App& app, vocab::BackendChoice& backend, int& threads, int max_threads);

// Checks that an option's value is an integer >= 0 (a count: threads, samples).
const CLI::Validator& count();

// Parses `args` (the words after the command). Returns false after printing the help (--help);
// throws UsageError for anything CLI11 refuses, in the project's words.
bool parse(CLI::App& app, const std::vector<std::string>& args);

// Runs a command body and turns what it throws into the exit status and one message on stderr.
// Exceptions of the `Located` types already say "FILE:LINE: key 'K': why" and are printed as they are
// (exit 2); UsageError and InputError exit 2, anything else 1. `quiet_input_errors` silences the exit-2
// messages (the ranks other than 0 under mpirun, which all parse the same config).
template <class... Located>
int exit_status(std::string_view command, const std::function<int()>& body, bool quiet_input_errors = false);

// The pieces exit_status is made of (one definition of each message form).
int report_usage_error(std::string_view command, const std::exception& e, bool quiet);
int report_input_error(std::string_view command, const std::exception& e, bool quiet, bool located);
int report_failure(std::string_view command, const std::exception& e);

template <class... Located>
int exit_status(std::string_view command, const std::function<int()>& body, bool quiet_input_errors) {
  try {
    return body();
  } catch (const UsageError& e) {
    return report_usage_error(command, e, quiet_input_errors);
  } catch (const InputError& e) {
    return report_input_error(command, e, quiet_input_errors, false);
  } catch (const std::exception& e) {
    if ((... || (dynamic_cast<const Located*>(&e) != nullptr)))
      return report_input_error(command, e, quiet_input_errors, true);
    return report_failure(command, e);
  }
}

}  // namespace normsim::cli
