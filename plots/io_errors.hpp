// io/'s failures as the PlotErrors plots reports, so that `normsim plot` keeps its exit statuses: a CSV file
// that cannot be read as one is the input's fault (2), a file that cannot be written the environment's (1).
#pragma once

#include <system_error>
#include <utility>

#include "io/csv_read.hpp"
#include "plot_error.hpp"

namespace normsim::plots {

// Runs `io_call` (any call into io/, or code that makes several) and returns what it returns.
template <class IoCall>
decltype(auto) as_plot_error(IoCall&& io_call) {
  try {
    return std::forward<IoCall>(io_call)();
  } catch (const io::CsvError& e) {
    throw input_error(e.what());
  } catch (const std::system_error& e) {
    throw environment_error(std::string(e.what()) +
                            " (check that the folder exists, is writable and the disk is not full)");
  }
}

}  // namespace normsim::plots
