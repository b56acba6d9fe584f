// precision = "bf16": what a PyTorch user gets under torch.autocast("cuda", dtype=torch.bfloat16), emulated
// on float32 storage. PyTorch's autocast op reference (docs.pytorch.org/docs/stable/amp.html, "CUDA Ops
// that can autocast to float16": matmul, linear, addmm, bmm, ...; "CUDA Ops that can autocast to float32":
// layer_norm, softmax, sum, norm, ...) casts a matrix product's inputs to bf16, accumulates in float32
// (cuBLAS CUBLAS_COMPUTE_32F) and returns bf16; norms, softmax and reductions run in float32, and an op on
// neither list (an activation, a residual add) runs in its inputs' widest type. So the points where the GPU
// stores bf16 are the weights at each use (the float32 master weight rounded), each product's inputs and its
// output, and the elementwise ops on a product's bf16 output (the activation, its backward); the residual
// stream, the norms and every statistic stay float32/float64. A bf16 value is held here as the float with
// the same value (its low 16 bits zero), so a product of two is exact in float32 and only the accumulation
// order separates the CPU from cuBLAS.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "sim/bf16_bits.hpp"
#include "sim/cpu_matrix.hpp"

namespace normsim::sim {

struct Config;

// x rounded to the nearest bf16 (8 significant bits), ties to even (sim/bf16_bits.hpp).
inline float round_to_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u = bf16_rounded_bits(u);
  std::memcpy(&x, &u, 4);
  return x;
}

// Every entry of a float32 matrix or block rounded to bf16 in place.
template <class M>
void round_to_bf16(M&& m) {
  m = m.unaryExpr([](float v) { return round_to_bf16(v); });
}

// m (a matrix or block of element type R) rounded to bf16 in place where `on`. bf16 runs on float32
// storage, so a float64 stack (never `on`) compiles to nothing here.
template <class R, class M>
void round_to_bf16_if(bool on, M&& m) {
  if constexpr (std::is_same_v<R, float>)
    if (on) round_to_bf16(std::forward<M>(m));
}

// m as a bf16 product reads it: m itself, or where `on` its copy in `rounded` rounded to bf16.
template <class R>
const Mat<R>& bf16_operand(bool on, const Mat<R>& m, Mat<R>& rounded) {
  if (!on) return m;
  rounded = m;
  round_to_bf16_if<R>(true, rounded);
  return rounded;
}

// Why `c` cannot run in bf16 ("" when it can): the emulation covers the MLP sublayer (plain or SwiGLU,
// every activation, biases, updates, the Jacobian probes); attention's and the routed MLP's products are
// not emulated yet, so those stacks are refused rather than run half in bf16.
std::string bf16_refusal(const Config& c);

}  // namespace normsim::sim
