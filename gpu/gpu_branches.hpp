// The two branch kinds on the device, forward and backward, for a batch of S samples at once, each written
// once for every device: the MLP (sim/mlp_branch.hpp) on the CUDA device gpu/gpu_mlp_device.hpp, attention
// (sim/attention_branch.hpp) on gpu/gpu_attention_device.hpp. Products are cuBLAS strided-batched over
// samples (every sample has its own weights); weights are drawn on the device with gaussian_at, either once
// and kept, or (recompute) drawn again into one shared scratch buffer whenever a product needs them.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "gpu/device_stats.hpp"
#include "gpu/gpu_parameter_update.hpp"
#include "gpu/gpu_update_probe.hpp"
#include "sim/branch_hooks.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"
#include "sim/value_residual.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// What every branch of one batch shares.
template <class R>
struct GpuContext {
  cublasHandle_t blas = nullptr;
  std::uint64_t seed = 0;
  int S = 0;                                  // samples in the batch
  const std::uint32_t* d_samples = nullptr;   // their indices (S)
  bool recompute = false;                     // draw weights again in the backward instead of keeping them
  DeviceBuffer<R>* weight_scratch = nullptr;  // recompute: S x (largest fan_in x fan_out)
  DeviceStats* stats = nullptr;               // where branches write branch_sq sums and weight-gradient norms
  // The parameter update (as sim::UpdateHooks): the first pass records its loss gradients into `record` in
  // the backward; the updated pass draws W + dW through `apply` (a training step: W_s, while recording the
  // step's gradients). Both null: neither.
  GpuParameterUpdate<R>* record = nullptr;
  const GpuParameterUpdate<R>* apply = nullptr;
  // A training step's coordinate-check sizes (sim/update_probe.hpp, gpu/gpu_update_probe.hpp): told each
  // matrix `apply` moves and each product's input; null unless a dwx_ or rel_dw_ metric is asked at a step s
  // >= 1.
  GpuUpdateProbe<R>* probe = nullptr;
};

template <class R>
class GpuBranch {
 public:
  virtual ~GpuBranch() = default;
  // u: S x T x d, must stay valid until backward. Returns F(u), S x T x d.
  virtual DeviceBuffer<R> forward(const R* d_u) = 0;
  // Returns dLoss/du; writes the norm of dLoss/dW for each weight W it has to d_gradw[int(W) * S + s] on the
  // device (DeviceStats' lf_gradw block; the others are left as they are). Frees the saved state.
  virtual DeviceBuffer<R> backward(const R* d_dout, double* d_gradw) = 0;
  // A self-attention's part in the value residual (Fv, sim/value_residual.hpp); null for every other branch.
  virtual sim::ValueResidual<DeviceBuffer<R>>* value_residual() { return nullptr; }
  // V as the heads read it, S x T x d (after forward; a self-attention's, else throws std::logic_error).
  virtual DeviceBuffer<R> values() const { throw std::logic_error("Fv: this branch has no values"); }
};

template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_branch(const sim::StackShape& s, const sim::Placement& p, int k,
                                              const GpuContext<R>& ctx, bool qkv_norm);

// One MLP branch; expert e of a routed MLP (gpu/gpu_moe.hpp) draws its matrices as sim::WeightId{kind, e}.
template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_mlp(const sim::StackShape& s, const sim::Placement& p, int k,
                                           const GpuContext<R>& ctx, std::uint32_t expert);

// d_out[s] = ||A_s^T B_s||_F for A (S x T x n), B (S x T x m), on the device, by the Gram identity when
// cheaper (as sim::frobenius_of_AtB).
template <class R>
void batched_frobenius_of_AtB(cublasHandle_t blas, const R* d_a, const R* d_b, int S, int T, int n, int m,
                              double* d_out);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
