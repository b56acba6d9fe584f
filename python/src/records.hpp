// Results as Python objects without a file in between: the columns of the result tables as numpy arrays
// (the rows that sim/run/result_rows.hpp defines for the CSV files), per-sample arrays, and every config's
// keys.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "sim/run/config_file.hpp"
#include "sim/run/result_rows.hpp"

namespace normsim::python {

namespace py = pybind11;

// Column name -> numpy array: config, sample, metric (position in the metric table), l, k (float, NaN where
// the metric has the other index), [lane (str),] value: the rows of layers.csv.
py::dict layer_columns(const sim::GridRecords& records);
// config, metric, l, k, mean, se, n: the rows of summary.csv.
py::dict summary_columns(const sim::GridRecords& records);
// Metric name -> array [config, sample, index], NaN where a value is missing, not finite or undefined; the
// metrics some config's `metrics` key asks for.
py::dict per_sample_arrays(const sim::Grid& grid, const sim::GridRecords& records);
// (config, sample, pass, layer, metric[, step]): the rows of nonfinite.csv, with the step where the grid's
// file has that column (sim::has_step_column).
py::list nonfinite_rows(const sim::GridRecords& records, bool with_step);
// One row of nonfinite.csv as a tuple (config, sample, pass, layer, metric[, step]).
py::tuple nonfinite_tuple(const sim::NonFiniteRow& r, bool with_step);
// Key name -> list of every config's value (bool, int, float or str), in key_columns() order, then the
// lists of names (`metrics`: a list of str per config).
py::dict config_values(const sim::Grid& grid);

// Fills the l and k arrays at `row` from a metric's index (the other one NaN).
void put_index(double* l, double* k, std::size_t row, std::size_t metric, std::size_t index);
// d["lane"] = the rows' lane fields (sim::lane_field: "", "mean" or the lane), when `lanes` (a grid with a
// block of lanes: its tables have the column).
void put_lanes(py::dict& d, bool lanes, const std::vector<int>& lane);

}  // namespace normsim::python
