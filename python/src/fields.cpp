#include "fields.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/stream_fields.hpp"
#include "sim/stream_metrics.hpp"
#include "sim/thread_split.hpp"
#include "vocab/metrics.hpp"

namespace normsim::python {

namespace py = pybind11;

namespace {

using Stream = py::array_t<double, py::array::c_style | py::array::forcecast>;

// The metric fields (f_nonfinite is the stream's finiteness, not a metric) in field order: the order the
// simulator computes and reports them in (sim/sample_metrics.cpp, store_forward).
std::vector<sim::StreamFieldInfo> metric_fields() {
  std::vector<sim::StreamFieldInfo> out;
  for (const sim::StreamFieldInfo& f : sim::kStreamFieldTable)
    if (f.metric >= 0) out.push_back(f);
  return out;
}

std::string metric_name(const sim::StreamFieldInfo& f) {
  return std::string(vocab::metric_table()[std::size_t(f.metric)].name);
}

py::list field_table() {
  py::list out;
  for (const sim::StreamFieldInfo& f : metric_fields())
    out.append(py::make_tuple(metric_name(f), f.pair, f.min_tokens));
  return out;
}

// Where the fields of stream i (sample s = i / L, layer l = i % L) of a batch go: field j at out[j][i], a
// pair field (of x_l and x_{l+1}, l + 1 < L) at out[j][s * (L - 1) + l].
struct FieldOutputs {
  std::vector<sim::StreamFieldInfo> fields = metric_fields();
  py::ssize_t L;
  int T, d;
  bool columns = false;
  std::vector<double*> out = {};
  double* eff_rank = nullptr;

  // Stream x_i's sums (sim::stream_sums, as the CPU backend sums its own streams), every field's value, and
  // its eff_rank (sim::effective_rank, the CPU backend's).
  void measure(const double* x, py::ssize_t i) const {
    const std::size_t size = std::size_t(T) * d;
    const double* x_i = x + std::size_t(i) * size;
    const double* next = i % L + 1 < L ? x_i + size : nullptr;
    const sim::StreamSums sums = sim::stream_sums(x_i, next, T, d, columns);
    for (std::size_t j = 0; j < fields.size(); ++j)
      if (!fields[j].pair || next)
        out[j][fields[j].pair ? i / L * (L - 1) + i % L : i] =
            sim::finish_stream_field(fields[j].field, sums, T, d);
    eff_rank[i] = sim::effective_rank(Eigen::Map<const sim::MatD>(x_i, T, d));
  }
};

// Every metric field and eff_rank of the streams x_0..x_{L-1} of S samples, stream (S, L, T, d): metric ->
// (S, L), a pair field (S, L-1); a field defined for more tokens than T is left out. The same stream gives
// the simulator's bits; the streams are split across `threads`, each computed whole by one (so the thread
// count changes no number), about 16 operations an entry (the row sums, the pair's and token_cos's unit
// columns) and 2 min(T, d) for eff_rank's Gram.
py::dict stream_fields(const Stream& stream, int threads) {
  if (stream.ndim() != 4) throw py::value_error("stream_fields: a stream (samples, layers, tokens, width)");
  const py::ssize_t S = stream.shape(0), L = stream.shape(1);
  FieldOutputs f{.L = L, .T = int(stream.shape(2)), .d = int(stream.shape(3))};
  for (const auto& field : f.fields)
    f.columns |= sim::kFieldNeedsColumns[field.field] && f.T >= field.min_tokens;
  std::vector<py::array_t<double>> arrays;
  for (const auto& field : f.fields) {
    arrays.emplace_back(std::vector<py::ssize_t>{S, field.pair ? L - 1 : L});
    f.out.push_back(arrays.back().mutable_data());
  }
  py::array_t<double> eff_rank(std::vector<py::ssize_t>{S, L});
  f.eff_rank = eff_rank.mutable_data();
  {
    py::gil_scoped_release unlocked;
    const double work = double(S * L) * f.T * f.d * (16 + 2 * std::min(f.T, f.d));
    sim::for_each_run(S * L, work, threads, [&](py::ssize_t first, py::ssize_t last) {
      for (py::ssize_t i = first; i < last; ++i) f.measure(stream.data(), i);
    });
  }
  py::dict result;
  for (std::size_t j = 0; j < f.fields.size(); ++j)
    if (f.T >= f.fields[j].min_tokens) result[py::str(metric_name(f.fields[j]))] = arrays[j];
  result["eff_rank"] = eff_rank;
  return result;
}

}  // namespace

void bind_fields(py::module_& m) {
  m.def("stream_field_table", &field_table,
        "(metric, pair, min_tokens) of every stream field, in the order the simulator computes them");
  m.def(
      "stream_fields", &stream_fields, py::arg("stream"), py::arg("threads"),
      "every stream field and eff_rank of stream (samples, layers, tokens, width), computed as the simulator "
      "computes them: metric -> (samples, layers), a pair field (samples, layers - 1)");
}

}  // namespace normsim::python
