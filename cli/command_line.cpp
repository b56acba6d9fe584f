// The shared command-line layer (see command_line.hpp).
#include "cli/command_line.hpp"

#include <limits>
#include <sstream>

#include "vocab/names.hpp"

namespace normsim::cli {

namespace {

std::string prefix(std::string_view command) {
  return command.empty() ? "normsim: " : "normsim " + std::string(command) + ": ";
}

// CLI11's refusal in the words every command uses.
std::string usage_message(const CLI::ParseError& e) {
  std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    // "The following argument was not expected: X" (one) or "...arguments were not expected: X Y".
    // CLI11 lists them last first: an option among them is named, else the first word.
    const auto colon = what.find(": ");
    std::istringstream words(colon == std::string::npos ? what : what.substr(colon + 2));
    std::string word, first;
    while (words >> word) {
      if (word.starts_with("-")) return "unknown option '" + word + "'";
      first = word;
    }
    return "unexpected argument '" + first + "'";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    // "--out: 1 required TEXT missing": the option's name comes first.
    const auto colon = what.find(':');
    if (colon != std::string::npos && what.find("missing") != std::string::npos)
      return what.substr(0, colon) + " needs a value";
  }
  return what;
}

// Why `text` is not an integer in 0..max ("" when it is).
std::string count_problem(const std::string& text, int max) {
  std::size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || n < 0) return text + ": expected an integer >= 0";
  return n <= max ? std::string() : text + ": at most " + std::to_string(max);
}

}  // namespace

const CLI::Validator& count() {
  static const CLI::Validator validator(
      [](const std::string& text) { return count_problem(text, std::numeric_limits<int>::max()); }, "N");
  return validator;
}

std::unique_ptr<CLI::App> make_command(const std::string& command, const std::string& description) {
  auto app = std::make_unique<CLI::App>(description, "normsim " + command);
  app->footer("Exit status: 0 ok, 2 usage or bad input, 1 runtime failure.");
  app->get_formatter()->column_width(34);
  app->option_defaults()->always_capture_default(false);
  return app;
}

void add_verbosity(CLI::App& app, Verbosity& verbosity) {
  app.add_flag("-q,--quiet", verbosity.quiet, "no progress output");
  app.add_flag("-v,--verbose", verbosity.verbose, "a line per step (configuration, figure, claim) on stderr");
}

void add_backend_options(CLI::App& app, vocab::BackendChoice& backend, int& threads, int max_threads) {
  // The name becomes the enum here, the command line's edge; the names are vocab::BackendChoice's table.
  std::vector<std::string> names;
  for (const auto& n : vocab::table<vocab::BackendChoice>()) names.emplace_back(n.name);
  app.add_option_function<std::string>(
         "--backend",
         [&backend](const std::string& name) { backend = vocab::parse<vocab::BackendChoice>(name); },
         "auto (default: cuda when built and a device exists, else cpu) | cpu | cuda | reference (plain "
         "loops on the host, for checking)")
      ->check(CLI::IsMember(names))
      ->type_name("NAME");
  app.add_option("--threads", threads,
                 "CPU threads (default 0: OMP_NUM_THREADS if set, else all cores; at most " +
                     std::to_string(max_threads) + ")")
      ->check(CLI::Validator(
          [max_threads](const std::string& text) { return count_problem(text, max_threads); }, "N"));
}

bool parse(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(usage_message(e));
  }
  return true;
}

int report_usage_error(std::string_view command, const std::exception& e, bool quiet) {
  if (!quiet) {
    std::cerr << prefix(command) << e.what() << " (normsim " << command << (command.empty() ? "" : " ")
              << "--help)\n";
  }
  return 2;
}

int report_input_error(std::string_view command, const std::exception& e, bool quiet, bool located) {
  if (!quiet) std::cerr << (located ? std::string() : prefix(command)) << e.what() << "\n";
  return 2;
}

int report_failure(std::string_view command, const std::exception& e) {
  std::cerr << prefix(command) << "error: " << e.what() << "\n";
  return 1;
}

}  // namespace normsim::cli
