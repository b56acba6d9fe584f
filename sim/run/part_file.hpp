// The checkpoint of a sweep: one part file per finished unit (a config's contiguous range of samples),
// holding its records exactly. Each file is stamped with the id of the grid that produced it (a hash of
// every config's values and seed) and ends in a checksum of its text, so that resume accepts only intact
// parts of this very run. The same text is what a distributed driver sends between processes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/record.hpp"
#include "sim/run/config_file.hpp"

namespace normsim::sim {

// Samples [begin, end) of config `config`.
struct Unit {
  int config = 0;
  int begin = 0, end = 0;
  // "cfg-000003.s0-3.part" (samples 0 to 3 inclusive): the unit's file under OUT/parts/.
  std::string part_name() const;
  friend bool operator==(const Unit&, const Unit&) = default;
};

// What a unit produced: one record per sample, in sample order, and the backend's time for it.
struct UnitResult {
  Unit unit;
  std::vector<SampleRecord> records;
  double seconds = 0;
};

// The grid's identity: a 64-bit FNV-1a hash of its run.json form (swept keys, every key of every config,
// seeds). Two grids that would write different numbers have different ids.
using GridId = std::uint64_t;
GridId grid_id(const Grid& grid);

// A unit's records as text and back, exactly (every double round-trips, NaN included). decode_unit throws
// std::runtime_error naming `source` and the line when the text is damaged (its checksum fails), belongs
// to another unit, or was written for another grid.
std::string encode_unit(const UnitResult& result, GridId grid);
UnitResult decode_unit(const std::string& text, const Unit& unit, GridId grid, const std::string& source);

// OUT/parts/<unit.part_name()>, written atomically (encode_unit's text).
void save_part(const std::filesystem::path& out, const UnitResult& result, GridId grid);
// The saved result of `unit`, or nullopt when it has no part file. Throws std::runtime_error when the file
// is damaged or does not belong to this unit and grid.
std::optional<UnitResult> load_part(const std::filesystem::path& out, const Unit& unit, GridId grid);

}  // namespace normsim::sim
