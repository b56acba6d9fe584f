// What ranks send rank 0 at the end of a distributed sweep: a report on the rank (this file), then each
// finished unit as sim::encode_unit's text, the part-file format, exact (every double round-trips).
#pragma once
#include <cstdint>
#include <string>

namespace normsim::mpi {

// Why a rank's share (or the setup before it) failed: what rank 0 throws, hence the CLI's exit status.
enum class FailureKind : std::int32_t {
  none = 0,
  runtime = 1,  // any other error: std::runtime_error, exit status 1
  usage = 2,    // sim::SweepError (OUT not empty, --resume on another grid): exit status 2
  backend = 3,  // sim::BackendUnavailable: exit status 1
};

// One rank's account of its share: whether it failed and why, where it ran, and how many units follow.
struct RankReport {
  FailureKind failure = FailureKind::none;
  std::string message;  // why it failed ("" when it did not)
  std::string host, backend, device;
  std::uint64_t units = 0;  // finished units sent after this report: the first `units` of its share
  double seconds = 0;       // compute time of those units
  std::uint64_t peak_memory_bytes = 0, peak_rss_bytes = 0;
};

// As JSON text. decode_report throws std::runtime_error when `text` is not a report.
std::string encode_report(const RankReport& report);
RankReport decode_report(const std::string& text);

}  // namespace normsim::mpi
