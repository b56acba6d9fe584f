// The edge matrices' shapes, draws and input (sim/edges.hpp).
#include "sim/edges.hpp"

#include <cmath>

#include "sim/inputs.hpp"
#include "sim/parametrization.hpp"
#include "sim/stack.hpp"

namespace normsim::sim {

bool has_edge(const Config& c, Edge e) {
  return e == Edge::embedding ? c.input_width > 0 || c.vocab > 0 : c.output_width > 0;
}

EdgeDims edge_dims(const Config& c, Edge e) {
  if (e == Edge::readout) return {c.width, c.output_width, double(c.width)};
  if (c.vocab > 0) return {c.vocab, c.width, 1.0};
  return {c.input_width, c.width, double(c.input_width)};
}

std::string_view edge_name(Edge e) {
  return e == Edge::embedding ? "embedding" : "readout";
}

namespace {
// The init keys' std for an edge matrix: the rule of `init` (no per-kind override, scaled init or
// placement multiplier reaches the edges); config validation refuses init = "unit" with edge matrices.
double init_key_std(const Config& c, const EdgeDims& d) {
  switch (c.init) {
    case vocab::Init::fanin:
      return c.init_gain / std::sqrt(d.fan_in);
    case vocab::Init::xavier:
      return c.init_gain * std::sqrt(2.0 / (d.fan_in + d.cols));
    case vocab::Init::fixed:
      return c.init_std;
    case vocab::Init::unit:
      break;
  }
  return std::nan("");
}
}  // namespace

double edge_std(const StackShape& s, Edge e) {
  const EdgeDims d = edge_dims(s.cfg, e);
  if (!s.rules) return init_key_std(s.cfg, d);
  const MatrixRule r = s.rules->edge(s, edge_name(e), d.fan_in, d.cols);
  return (r.std ? *r.std : init_key_std(s.cfg, d)) * r.mult;
}

double edge_weight_entries(const Config& c) {
  double n = 0;
  for (const Edge e : {Edge::embedding, Edge::readout})
    if (has_edge(c, e)) n += double(edge_dims(c, e).rows) * edge_dims(c, e).cols;
  return n;
}

double edge_entries(const Config& c) {
  const double u = has_embedding(c) ? double(c.tokens) * edge_dims(c, Edge::embedding).rows : 0.0;
  const double logits = has_readout(c) ? 2.0 * c.tokens * c.output_width : 0.0;
  return edge_weight_entries(c) + u + logits;
}

template <class R>
Mat<R> embedding_input(const Config& c, std::uint32_t sample, std::uint32_t batch) {
  const EdgeDims d = edge_dims(c, Edge::embedding);
  Mat<R> u = Mat<R>::Zero(c.tokens, d.rows);
  for (int t = 0; t < c.tokens; ++t)
    for (int i = 0; i < (c.vocab > 0 ? 0 : d.rows); ++i)
      u(t, i) = R(input_entry(c.seed, sample, t, i, d.rows, c.input_std, c.input_corr, batch));
  if (c.vocab > 0)
    for (int t = 0; t < c.tokens; ++t) u(t, token_id(c.seed, sample, t, c.vocab, batch)) = R(1);
  return u;
}

template Mat<float> embedding_input<float>(const Config&, std::uint32_t, std::uint32_t);
template Mat<double> embedding_input<double>(const Config&, std::uint32_t, std::uint32_t);

}  // namespace normsim::sim
