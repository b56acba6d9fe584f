// Part files: format "normsim-part 2", or "normsim-part 3" for a unit of a configuration with training steps
// (a "steps T" line, and each record's step), docs/conventions.md, "Part files".
#include "sim/run/part_file.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/csv_write.hpp"
#include "sim/metrics.hpp"
#include "sim/run/results.hpp"
#include "vocab/block_lanes.hpp"

namespace normsim::sim {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPartMagic = "normsim-part 2";
constexpr std::string_view kStepsPartMagic = "normsim-part 3";

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

[[noreturn]] void damaged(const std::string& source, std::size_t line, const std::string& why) {
  throw std::runtime_error(source + ":" + std::to_string(line) + ": damaged unit records: " + why +
                           " (a part file: delete it and run again with --resume to redo that unit)");
}

double parse_double(std::string_view s, bool& ok) {
  double x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  ok = ec == std::errc() && end == s.data() + s.size();
  return x;
}

// One line per metric: "NAME COUNT v1 v2 ...".
void encode_values(std::string& s, const std::vector<std::vector<double>>& values) {
  for (std::size_t m = 0; m < values.size(); ++m) {
    s.append(metric_table()[m].name).append(" ").append(std::to_string(values[m].size()));
    for (double v : values[m]) s.append(" ").append(io::format_number(v));
    s.append("\n");
  }
}

// "record S M [step T] [nonfinite PASS LAYER] [lanes N]", the values' M lines, each lane's M lines, then the
// flagged statistics ("NAME LAYER", a lane's "NAME/LANE LAYER").
void encode_record(std::string& s, const SampleRecord& r, bool stepped) {
  s += "record " + std::to_string(r.sample) + " " + std::to_string(r.values.size());
  if (stepped) s += " step " + std::to_string(r.step);
  if (r.nonfinite) s += " nonfinite " + r.nonfinite->pass + " " + std::to_string(r.nonfinite->layer);
  if (!r.lanes.empty()) s += " lanes " + std::to_string(r.lanes.size());
  s += "\n";
  encode_values(s, r.values);
  for (const auto& lane : r.lanes) encode_values(s, lane);
  s += "flagged " + std::to_string(r.nonfinite_statistics.size());
  for (const auto& f : r.nonfinite_statistics) {
    s.append(" ").append(metric_table()[f.metric].name);
    if (f.lane >= 0) s += '/', s += std::to_string(f.lane);
    s += ' ', s += std::to_string(f.layer);
  }
  s += "\n";
}

// Reads the text line by line, counting lines for messages.
struct LineReader {
  std::istringstream in;
  const std::string& source;
  std::string line;
  std::size_t n = 0;
  std::istringstream next(std::string_view what) {
    if (!std::getline(in, line)) damaged(source, n, "ends before " + std::string(what));
    ++n;
    return std::istringstream(line);
  }
  [[noreturn]] void fail(const std::string& why) const { damaged(source, n, why); }
};

void decode_values(LineReader& rd, std::vector<std::vector<double>>& values, std::size_t metrics) {
  std::string word;
  values.resize(metrics);
  for (std::size_t m = 0; m < metrics; ++m) {
    auto ms = rd.next("a metric");
    std::size_t count = 0;
    if (!(ms >> word) || word != metric_table()[m].name || !(ms >> count))
      rd.fail("expected metric " + std::string(metric_table()[m].name));
    // Each value takes at least two characters (" x"): a larger count is damage, not a reason to allocate.
    if (count > rd.line.size() / 2) rd.fail("count " + std::to_string(count) + " exceeds the line");
    values[m].resize(count);
    for (double& v : values[m]) {
      bool ok = false;
      if (!(ms >> word) || (v = parse_double(word, ok), !ok)) rd.fail("bad value '" + word + "'");
    }
    if (ms >> word) rd.fail("more values than announced");
  }
}

void decode_flagged(LineReader& rd, SampleRecord& r) {
  auto ls = rd.next("the flagged statistics");
  std::string word;
  std::size_t count = 0;
  if (!(ls >> word) || word != "flagged" || !(ls >> count) || count > rd.line.size() / 4)
    rd.fail("expected flagged statistics");
  for (std::size_t i = 0; i < count; ++i) {
    NonFiniteStatistic f;
    if (!(ls >> word >> f.layer)) rd.fail("bad flagged statistic");
    if (const auto slash = word.find('/'); slash != std::string::npos) {
      bool ok = false;
      f.lane = int(parse_double(std::string_view(word).substr(slash + 1), ok));
      if (!ok || f.lane < 0) rd.fail("bad flagged statistic's lane");
      word.resize(slash);
    }
    if ((f.metric = metric_id(word)) < 0 || f.layer < 0) rd.fail("bad flagged statistic");
    r.nonfinite_statistics.push_back(f);
  }
}

// Record `sample`; `step` < 0 in format 2 (no step field), the expected step in format 3.
SampleRecord decode_record(LineReader& rd, int sample, int step) {
  SampleRecord r;
  std::size_t metrics = 0;
  std::string word;
  auto ls = rd.next("a record");
  ls >> word >> r.sample >> metrics;
  if (word != "record" || !ls || r.sample != sample) rd.fail("expected record " + std::to_string(sample));
  if (metrics > metric_table().size()) rd.fail("more metrics than the metric table");
  if (step >= 0 && (!(ls >> word >> r.step) || word != "step" || r.step != step))
    rd.fail("expected step " + std::to_string(step) + " of record " + std::to_string(sample));
  std::size_t lanes = 0;
  while (ls >> word) {  // "record S M [step T] [nonfinite PASS LAYER] [lanes N]"
    if (word == "nonfinite" && !r.nonfinite) {
      r.nonfinite.emplace();
      ls >> r.nonfinite->pass >> r.nonfinite->layer;
    } else if (word == "lanes" && lanes == 0) {
      ls >> lanes;
      if (lanes < 2 || lanes > std::size_t(vocab::kMaxLanes)) rd.fail("bad lane count");
    } else {
      rd.fail("bad field '" + word + "' of a record");
    }
    if (!ls) rd.fail("bad " + word + " field");
  }
  decode_values(rd, r.values, metrics);
  r.lanes.resize(lanes);
  for (auto& lane : r.lanes) decode_values(rd, lane, metrics);
  decode_flagged(rd, r);
  return r;
}

// The text without its last line "checksum H", after checking H; throws when it does not match.
std::string_view verified_body(const std::string& text, const std::string& source) {
  const auto body_end = text.rfind("checksum ");
  if (text.rfind(kPartMagic, 0) != 0 && text.rfind(kStepsPartMagic, 0) != 0)
    damaged(source, 1, "not a normsim part file (format 2 or 3)");
  if (body_end == std::string::npos || (body_end > 0 && text[body_end - 1] != '\n'))
    damaged(source, 0, "no checksum line");
  const std::string_view body(text.data(), body_end);
  if (text.substr(body_end) != "checksum " + hex(fnv1a(body)) + "\n")
    damaged(source, 0, "checksum mismatch (the file was altered or cut short)");
  return body;
}

}  // namespace

std::string Unit::part_name() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "cfg-%06d.s%d-%d.part", config, begin, end - 1);
  return buf;
}

GridId grid_id(const Grid& grid) {
  return fnv1a(grid_json(grid).dump());
}

std::string encode_unit(const UnitResult& result, GridId grid) {
  const Unit& u = result.unit;
  int steps = 0;
  for (const auto& r : result.records) steps = std::max(steps, r.step);
  std::string s(steps > 0 ? kStepsPartMagic : kPartMagic);
  s += "\ngrid " + hex(grid) + "\nconfig " + std::to_string(u.config) + "\nsamples " +
       std::to_string(u.begin) + " " + std::to_string(u.end) + "\nseconds " +
       io::format_number(result.seconds) + "\n";
  if (steps > 0) s += "steps " + std::to_string(steps) + "\n";
  for (const auto& r : result.records) encode_record(s, r, steps > 0);
  s += "end\n";
  return s + "checksum " + hex(fnv1a(s)) + "\n";
}

UnitResult decode_unit(const std::string& text, const Unit& unit, GridId grid, const std::string& source) {
  LineReader rd{std::istringstream(std::string(verified_body(text, source))), source, {}, 0};
  UnitResult result{unit, {}, 0};
  std::string word, id, secs;
  const bool stepped = rd.next("its header").str() == kStepsPartMagic;
  rd.next("grid") >> word >> id;
  if (word != "grid" || id != hex(grid))
    rd.fail("written by a run of another grid or seed (grid " + id + ", this run's " + hex(grid) + ")");
  int config = -1, begin = -1, end = -1, steps = 0;
  rd.next("config") >> word >> config;
  if (word != "config" || config != unit.config) rd.fail("expected config " + std::to_string(unit.config));
  rd.next("samples") >> word >> begin >> end;
  if (word != "samples" || begin != unit.begin || end != unit.end) rd.fail("sample range does not match");
  bool ok = false;
  rd.next("seconds") >> word >> secs;
  result.seconds = parse_double(secs, ok);
  if (word != "seconds" || !ok) rd.fail("expected seconds");
  if (stepped && (!(rd.next("steps") >> word >> steps) || word != "steps" || steps < 1 || steps > kMaxSteps))
    rd.fail("expected steps");
  for (int s = begin; s < end; ++s)
    for (int t = 0; t <= steps; ++t) result.records.push_back(decode_record(rd, s, stepped ? t : -1));
  if (rd.next("end").str() != "end") rd.fail("expected end");
  return result;
}

void save_part(const fs::path& out, const UnitResult& result, GridId grid) {
  io::write_file_atomic(out / "parts" / result.unit.part_name(), encode_unit(result, grid));
}

std::optional<UnitResult> load_part(const fs::path& out, const Unit& unit, GridId grid) {
  const fs::path path = out / "parts" / unit.part_name();
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return decode_unit(text.str(), unit, grid, path.string());
}

}  // namespace normsim::sim
