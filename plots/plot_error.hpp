// The one exception type the plots library throws. Its message says what is wrong and how to fix it; only the
// command line turns it into an exit status (2 for usage or input errors, 1 for the environment or gnuplot).
#pragma once

#include <stdexcept>
#include <string>

namespace normsim::plots {

class PlotError : public std::runtime_error {
 public:
  enum class Kind {
    input,        // bad arguments or a results folder that cannot be read as one: exit status 2
    environment,  // gnuplot missing or failing, a file that cannot be written: exit status 1
  };

  PlotError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

  Kind kind() const { return kind_; }
  int exit_status() const { return kind_ == Kind::input ? 2 : 1; }

 private:
  Kind kind_;
};

// Shorthands so call sites read as the kind of failure they report.
inline PlotError input_error(const std::string& message) {
  return {PlotError::Kind::input, message};
}
inline PlotError environment_error(const std::string& message) {
  return {PlotError::Kind::environment, message};
}

}  // namespace normsim::plots
