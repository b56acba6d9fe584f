// A rank's report as JSON (mpi/messages.hpp).
#include "mpi/messages.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace normsim::mpi {

constexpr const char* kFormat = "normsim-rank-report 1";

std::string encode_report(const RankReport& r) {
  return nlohmann::json{{"format", kFormat},
                        {"failure", static_cast<std::int32_t>(r.failure)},
                        {"message", r.message},
                        {"host", r.host},
                        {"backend", r.backend},
                        {"device", r.device},
                        {"units", r.units},
                        {"seconds", r.seconds},
                        {"peak_memory_bytes", r.peak_memory_bytes},
                        {"peak_rss_bytes", r.peak_rss_bytes}}
      .dump();
}

RankReport decode_report(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    if (j.at("format") != kFormat) throw std::runtime_error("format is " + j.at("format").dump());
    RankReport r;
    const auto failure = j.at("failure").get<std::int32_t>();
    if (failure < 0 || failure > static_cast<std::int32_t>(FailureKind::backend))
      throw std::runtime_error("unknown failure " + std::to_string(failure));
    r.failure = static_cast<FailureKind>(failure);
    r.message = j.at("message").get<std::string>();
    r.host = j.at("host").get<std::string>();
    r.backend = j.at("backend").get<std::string>();
    r.device = j.at("device").get<std::string>();
    r.units = j.at("units").get<std::uint64_t>();
    r.seconds = j.at("seconds").get<double>();
    r.peak_memory_bytes = j.at("peak_memory_bytes").get<std::uint64_t>();
    r.peak_rss_bytes = j.at("peak_rss_bytes").get<std::uint64_t>();
    return r;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("damaged report from another rank (not the same normsim?): ") +
                             e.what());
  }
}

}  // namespace normsim::mpi
