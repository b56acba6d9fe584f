// The GPU benchmark workloads, defined once here (docs/benchmarks.md); bench/gpu_torch.py receives their
// parameters from normsim_gpu_bench. Keys not named keep their config defaults (relu, 4 heads, non-causal,
// LayerNorm, mlp_ratio 4):
//   W1: pre, mlp, gelu, depth 64, width 512, mlp_ratio 4, tokens 64, samples 4, float32 (issue 2).
//   W2: pre, transformer, width 4096, depth 96, tokens 512, samples 8, float32 (issue 5).
//   W2bf16: W2's 48 MLP sublayers (pre, mlp, relu, depth 48, width 4096, tokens 512, samples 8) in
//   precision bf16, which emulates the MLP sublayer only so far (sim/bf16.hpp; issue 29 item 4).
//   W2tf32: W2 in precision tf32 (float32 storage, products on TF32 tensor cores; issue 29 item 4's target
//   is against cuBLAS's TF32 rate).
// Nominal FLOPs (forward + backward = 3 x forward, weight gradients counted as if formed): MLP sublayer
// 6 r T d^2 x 2 (two products of T x d x r d); attention sublayer 24 T d^2 (four d x d projections) +
// 12 T^2 d (scores and mixing, non-causal count).
#pragma once
#include <stdexcept>
#include <string>

#include "sim/config.hpp"
#include "vocab/names.hpp"

namespace normsim::bench {

struct Workload {
  std::string name;
  sim::Config config;
  double flops;  // nominal, all samples
};

inline double nominal_flops(const sim::Config& c) {
  const double T = c.tokens, d = c.width, K = c.depth, S = c.samples, r = c.mlp_ratio;
  const double mlp = 12 * r * T * d * d, attn = 24 * T * d * d + 12 * T * T * d;
  if (c.sublayer == normsim::vocab::Sublayer::mlp) return S * K * mlp;
  if (c.sublayer == normsim::vocab::Sublayer::attention) return S * K * attn;
  return S * K / 2 * (mlp + attn);  // transformer: attention and MLP sublayers alternate
}

inline Workload benchmark_workload(const std::string& name) {
  sim::Config c;
  c.placement = normsim::vocab::Placement::pre;
  c.precision = normsim::vocab::Precision::float32;
  if (name == "w1") {
    c.sublayer = vocab::Sublayer::mlp, c.activation = vocab::Activation::gelu, c.depth = 64, c.width = 512,
    c.mlp_ratio = 4, c.tokens = 64;
    c.samples = 4;
  } else if (name == "w2" || name == "w2tf32") {
    c.sublayer = vocab::Sublayer::transformer, c.depth = 96, c.width = 4096, c.tokens = 512, c.samples = 8;
    if (name == "w2tf32") c.precision = normsim::vocab::Precision::tf32;
  } else if (name == "w2bf16") {
    c.sublayer = vocab::Sublayer::mlp, c.depth = 48, c.width = 4096, c.tokens = 512, c.samples = 8;
    c.precision = normsim::vocab::Precision::bf16;
  } else {
    throw std::invalid_argument("unknown benchmark workload '" + name + "' (w1, w2, w2bf16, w2tf32)");
  }
  return {name, c, nominal_flops(c)};
}

}  // namespace normsim::bench
