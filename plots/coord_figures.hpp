// The figures of a coordinate check (`normsim coord`; check/coord.hpp writes the CSVs they read): per metric
// and setting, coord_lines_<metric> (the layer mean against step, a line per width or depth: microsoft/mup's
// coord check with steps on x) and coord_exponent_<metric> (the fitted exponent of the layer mean against
// step with its 95 % interval, the predicted exponent dashed and its agreement band shaded).
#pragma once

#include <filesystem>
#include <vector>

#include "figure.hpp"

namespace normsim::plots {

// Empty when OUT/coord/lines.csv is absent (a folder `normsim coord` did not write).
std::vector<Figure> coord_figures(const std::filesystem::path& out);

}  // namespace normsim::plots
