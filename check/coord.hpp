// The coordinate check of a results folder (issue 28 item 4; `normsim coord`, `normsim.coord`): the folder is
// a run whose grid sweeps width or depth (the swept key); every other key's values make the settings. For
// each setting, metric, layer group and step, the exponent b of value ~ key^b is fitted as a claim's power
// law is (stats::fit_growth: each sample's least-squares line of ln value on ln key, the slopes averaged, a
// 95 % Student-t interval over the independent samples), and compared with the exponent
// theory/scaling_exponents predicts for the setting's parametrization, with check's verdict rule
// (verdict.hpp). Files, under OUT/coord/: fits.csv (a row per fit), verdicts.csv (a row per setting and
// metric with a prediction, its fits' verdicts combined) and lines.csv (the layer mean per setting, swept
// value and step: the classic figure's lines).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "check/verdict.hpp"

namespace normsim::check {

struct CoordFit {
  std::string setting;          // the other keys that vary, "key=value; ..." ("" when one setting)
  std::string parametrization;  // the preset the prediction is read for (none with init fanin: sp)
  std::string metric;
  std::string layers;  // an index l or k, "last" (a depth sweep) or "mean" (each sample's layer mean)
  int step = 0;
  std::optional<Estimate> exponent;  // empty: fewer than two swept values with a finite, positive value
  std::optional<double> predicted;
  std::optional<Band> band;
  Decision decision;  // inconclusive without a band
  std::string source;
};

struct CoordLine {  // one point of the classic figure: the layer mean over samples
  std::string setting, metric;
  double swept = 0;
  int step = 0;
  Estimate value;
};

struct CoordResult {
  std::string key;  // width or depth
  std::vector<CoordFit> fits;
  std::vector<CoordLine> lines;
};

// Reads OUT/layers.csv and OUT/run.json's swept keys; `key` must be one of them. Throws std::runtime_error
// naming the file (and line) when the folder cannot be read as a coordinate check.
CoordResult coord_fits(const std::filesystem::path& out, const std::string& key);

// Writes OUT/coord/{fits,verdicts,lines}.csv (each whole or not at all).
void write_coord(const std::filesystem::path& out, const CoordResult& result);

// "3 of 5 verdicts supported, 1 refuted, ..." for the command's last line.
std::string coord_summary(const CoordResult& result);

}  // namespace normsim::check
