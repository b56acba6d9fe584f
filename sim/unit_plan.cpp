#include "sim/unit_plan.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "io/csv_write.hpp"
#include "sim/edges.hpp"
#include "sim/jacobian_wanted.hpp"
#include "vocab/names.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::sim {

namespace {

struct Sizes {
  double d, t, h, heads, bytes;
  bool swiglu;
};

Sizes sizes(const Config& c) {
  return {double(c.width),
          double(c.tokens),
          std::round(c.mlp_ratio * c.width),
          double(c.heads),
          c.precision == vocab::Precision::float64 ? 8.0 : 4.0,
          c.activation == vocab::Activation::swiglu};
}

// The fraction of sublayers that are attention: 0 (mlp), 1 (attention), 1/2 (transformer) or 2/3 (decoder:
// the cross-attention costs what self-attention does, its K and V coming from an encoder output of T tokens).
double attention_share(const Config& c) {
  return vocab::layout(c.sublayer).attention_share();
}

}  // namespace

double sample_cost(const Config& c) {
  const Sizes s = sizes(c);
  const double mlp = (s.swiglu ? 3.0 : 2.0) * s.t * s.d * s.h;
  const double attention = 4.0 * s.t * s.d * s.d + 2.0 * s.t * s.t * s.d;
  const double a = attention_share(c);
  const double sublayer = (1 - a) * mlp + a * attention;
  const double svd = s.t * s.t * s.d;
  // Forward and backward cost about 3 forward passes; each reverse pass of the Jacobian probes about 2;
  // update != none runs a second forward pass: about a third of a forward-and-backward more.
  const double jacobian = 2.0 * JacobianWanted::of(c.metrics).reverse_passes(c.jacobian_probes) / 3.0;
  const double passes = 1.0 + jacobian + (c.update == vocab::Update::none ? 0.0 : 1.0 / 3.0);
  // steps > 0 runs steps + 1 such passes (sim/cpu/train_loop.hpp).
  return (c.depth * sublayer * passes + (c.depth + 1) * svd) * (c.steps + 1) *
         (c.precision == vocab::Precision::float64 ? 2.0 : 1.0);
}

SampleMemory cpu_sample_memory(const Config& c) {
  const Sizes s = sizes(c);
  const double a = attention_share(c), K = c.depth;
  // Weights: one matrix at a time (drawn when used, redrawn in the backward), the largest of the stack. Where
  // cpu_keeps_weights allows, the whole stack is kept instead: at most an eighth of the machine, not counted.
  const double mlp_w = s.d * s.h, att_w = s.d * s.d;
  // MLP, kept for the backward: h (+ g for SwiGLU, + the gate of float32 (and bf16) GELU, SiLU and SwiGLU:
  // activations_vec.hpp's keeps_gate) (T x H each); the backward's temporaries for one sublayer: a, dh (+
  // dg).
  const bool keeps_gate =
      c.precision != vocab::Precision::float64 &&
      (c.activation == vocab::Activation::gelu || c.activation == vocab::Activation::silu || s.swiglu);
  const double mlp_act = (1.0 + (s.swiglu ? 1.0 : 0.0) + (keeps_gate ? 1.0 : 0.0)) * s.t * s.h,
               mlp_tmp = (s.swiglu ? 3.0 : 2.0) * s.t * s.h;
  // Attention, kept: q, k, v before and after their norms, o (T x d) and the probabilities (heads x T x T).
  const double att_act = 7.0 * s.t * s.d + s.heads * s.t * s.t;
  // The tape: about four T x d values per sublayer (branch output, sum, norm, scale) and their gradients.
  const double tape = 8.0 * s.t * s.d;
  SampleMemory m;
  // The gradients a pass hands to its update: the one update (steps = 0) and sgd's steps keep every
  // matrix's until they are applied (the stack's weights once), Adam's steps take each into m and v as it is
  // formed, in one buffer the size of the largest matrix (sim/cpu/optimizer.hpp).
  const bool stepped = c.update == vocab::Update::sgd || c.update == vocab::Update::adam;
  const double largest = std::max(a < 1 ? mlp_w : 0.0, a > 0 ? att_w : 0.0) * s.bytes;
  const double gradients = !stepped                                         ? 0.0
                           : c.steps > 0 && c.update == vocab::Update::adam ? largest
                                                                            : cpu_stack_weight_bytes(c);
  // The edge matrices (sim/edges.hpp) live for the whole pass, with their inputs and logits; sgd and adam
  // keep their gradients too.
  const double edges = edge_entries(c), edge_grads = stepped ? edge_weight_entries(c) : 0.0;
  m.weights = largest + gradients + (edges + edge_grads) * s.bytes + cpu_optimizer_bytes(c);
  m.activations = (K * ((1 - a) * mlp_act + a * att_act + tape) + (a < 1 ? mlp_tmp : 0.0)) * s.bytes;
  // Streams and their gradients in double; update != none adds the updated pass's streams.
  m.metric_copies = (c.update == vocab::Update::none ? 2.0 : 3.0) * (K + 1) * s.t * s.d * 8.0;
  m.slack = 0.2 * (m.weights + m.activations + m.metric_copies);
  return m;
}

double cpu_stack_weight_bytes(const Config& c) {
  const Sizes s = sizes(c);
  const double a = attention_share(c);
  const double mlp = (s.swiglu ? 3.0 : 2.0) * s.d * s.h, attention = 4.0 * s.d * s.d;
  return c.depth * ((1 - a) * mlp + a * attention) * s.bytes;
}

double cpu_optimizer_bytes(const Config& c) {
  if (c.steps == 0) return 0;
  // The stack's weights and the edge matrices' (sim/edges.hpp), once per copy the optimizer keeps.
  const double edges = edge_weight_entries(c) * sizes(c).bytes;
  return (cpu_stack_weight_bytes(c) + edges) * (c.update == vocab::Update::adam ? 3.0 : 1.0);
}

bool cpu_keeps_weights(const Config& c, int concurrent, double machine) {
  if (c.recompute == vocab::Recompute::yes) return false;
  const double kept = cpu_stack_weight_bytes(c) * concurrent;
  const double room = machine - cpu_sample_memory(c).total() * concurrent;
  if (c.recompute == vocab::Recompute::no) return kept <= room;  // refused by cpu_memory_refusal otherwise
  return kept <= std::min(machine / 8, room);
}

std::string cpu_memory_refusal(const Config& c, int concurrent, double machine) {
  const SampleMemory m = cpu_sample_memory(c);
  const double need = m.total() * concurrent;
  if (need <= machine && c.recompute == vocab::Recompute::no && !cpu_keeps_weights(c, concurrent, machine))
    return "key 'recompute': false keeps every weight for the backward, " +
           human_bytes(cpu_stack_weight_bytes(c) * concurrent) + " for " + std::to_string(concurrent) +
           " samples at once beside the " + human_bytes(need) +
           " the run needs otherwise, more than this machine's " + human_bytes(machine) +
           " (recompute = \"auto\" or \"true\" draws them again instead)";
  if (need <= machine) return "";
  std::string why =
      std::string(c.steps > 0 ? "keys 'width', 'depth', 'mlp_ratio', 'tokens', 'update', 'steps'"
                              : "keys 'width', 'depth', 'mlp_ratio', 'tokens'") +
      ": width " + std::to_string(c.width) + " x depth " + std::to_string(c.depth);
  if (c.sublayer != vocab::Sublayer::attention) why += " x mlp_ratio " + io::format_number(c.mlp_ratio);
  why += " (" + std::string(vocab::name(c.precision)) + ") needs " + human_bytes(m.weights) +
         " of weights (its largest weight matrix; they are drawn one at a time" +
         (c.steps > 0 ? ", plus the optimizer's state: " + human_bytes(cpu_optimizer_bytes(c)) : "") + ")";
  why += ", tokens " + std::to_string(c.tokens) + " " +
         human_bytes(m.activations + m.metric_copies + m.slack) +
         " of activations and temporaries per sample";
  if (concurrent > 1)
    why += "; " + std::to_string(concurrent) + " samples at once (one per thread) need " + human_bytes(need);
  return why + "; this machine has " + human_bytes(machine) +
         " (fewer threads, a smaller width, depth or tokens, or the CUDA backend)";
}

double machine_memory_bytes() {
  double bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  // cgroup v2: "max" or a number of bytes.
  std::ifstream limit("/sys/fs/cgroup/memory.max");
  double cg = 0;
  if (limit >> cg && cg > 0) bytes = std::min(bytes, cg);
  return bytes;
}

std::string human_bytes(double bytes) {
  static const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) bytes /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes < 10 ? "%.2g %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

}  // namespace normsim::sim
