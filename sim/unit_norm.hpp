// nGPT's unit-norm weights (the init rule "unit"): every vector of a weight matrix along the embedding
// dimension rescaled to one length after the Gaussian draw. Written once for the CPU draw
// (sim/cpu/cpu_branches.cpp, sim/cpu/cpu_moe.cpp) and the CUDA kernel unit_norm_vectors_kernel
// (gpu/ops/unit_norm_vectors.cu; its reference in gpu/ops.hpp).
#pragma once
#include <cmath>
#include <cstddef>

#include "sim/hd.hpp"

namespace normsim::sim {

// Which vectors of a weight W (fan_in x fan_out, row-major) a unit-norm draw normalizes, and to what length.
// nGPT normalizes along n_embd (NVIDIA/ngpt train.py L394-408, justnorm L388-392): an input matrix's
// (query, key, value, c_fc: weight n_proj x n_embd, justnorm over dim 1) vectors over its input d, normsim's
// columns; an output matrix's (att_c_proj, mlp_c_proj: n_embd x n_proj, dim 0) over its output d, normsim's
// rows.
struct UnitNorm {
  bool columns;  // W's columns (an input matrix), else its rows (an output matrix)
  double
      length;  // every vector's Euclidean length (the rule's gain, times scaled_output and the placement's)
};

// The n entries v[0], v[stride], ..., v[(n - 1) stride] rescaled to Euclidean length `length`; the squares
// are summed in double, in order, so every device gives the same bits from the same entries.
template <class R>
NORMSIM_HD void normalize_vector(R* v, int n, std::size_t stride, double length) {
  double sq = 0;
  for (int i = 0; i < n; ++i) sq += double(v[i * stride]) * double(v[i * stride]);
  const double scale = length == 0 ? 0.0 : length / std::sqrt(sq);  // gain 0 draws zeros
  for (int i = 0; i < n; ++i) v[i * stride] = R(double(v[i * stride]) * scale);
}

// Vector j of W (rows x cols, row-major): column j, or row j.
template <class R>
NORMSIM_HD void normalize_weight_vector(R* w, int rows, int cols, int j, const UnitNorm& u) {
  if (u.columns)
    normalize_vector(w + j, rows, std::size_t(cols), u.length);
  else
    normalize_vector(w + std::size_t(j) * cols, cols, 1, u.length);
}

// Every vector of W (rows x cols, row-major).
template <class R>
void normalize_weight(R* w, int rows, int cols, const UnitNorm& u) {
  const int vectors = u.columns ? cols : rows;
  for (int j = 0; j < vectors; ++j) normalize_weight_vector(w, rows, cols, j, u);
}

}  // namespace normsim::sim
