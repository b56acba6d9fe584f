// The edge matrices of a stack (docs/design/parametrization.md 3.4; docs/parametrizations.md): an embedding
//   x_0 = u W_emb,  u the T x input_width Gaussian input (input_std, input_corr), or the T x vocab one-hot
//                   rows of uniform token ids (x_0[t] = W_emb[id_t] exactly: a product with one 1 per row)
// and a readout z = y W_out (T x output_width logits) on which the loss reads. Outside the sublayers' weight
// kinds: their Philox streams are wemb (layer word 0) and wout (layer word K), so no sublayer's draw, array
// or memory row moves; without input_width, vocab and output_width the stack is today's (x_0 drawn, loss on
// y). The std is the parametrization's embedding or readout rule times its multiplier (folded into the
// drawn matrix, as for the sublayers' matrices), else the init key's rule of the edge's fans.
#pragma once
#include <string_view>

#include "sim/config.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/philox.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

struct StackShape;

// W_e is rows x cols; fan_in as the rules read it (a token embedding's is 1: one row reaches a token).
struct EdgeDims {
  int rows = 0, cols = 0;
  double fan_in = 0;
};

bool has_edge(const Config& c, Edge e);
inline bool has_embedding(const Config& c) {
  return has_edge(c, Edge::embedding);
}
inline bool has_readout(const Config& c) {
  return has_edge(c, Edge::readout);
}
EdgeDims edge_dims(const Config& c, Edge e);
std::string_view edge_name(Edge e);  // its parametrization selector: "embedding" or "readout"
inline Stream edge_stream(Edge e) {
  return e == Edge::embedding ? Stream::wemb : Stream::wout;
}
inline std::uint32_t edge_layer(const Config& c, Edge e) {
  return e == Edge::embedding ? 0u : std::uint32_t(c.depth);
}
// The std W_e is drawn with (its multiplier included).
double edge_std(const StackShape& s, Edge e);

// Entries one sample's pass holds for the edge matrices (the backends' memory plans): each W_e, the
// embedding's input u, the logits and their gradient (0 without edge matrices).
double edge_entries(const Config& c);
double edge_weight_entries(const Config& c);  // each W_e's entries alone

// The embedding's input u of a sample on batch `batch` (sim/inputs.hpp), in the backend's precision:
// Gaussian T x input_width, or one-hot T x vocab.
template <class R>
Mat<R> embedding_input(const Config& c, std::uint32_t sample, std::uint32_t batch = 0);

}  // namespace normsim::sim
