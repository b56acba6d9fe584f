// Variants of the CUDA backend's kernels and products that a benchmark can switch between in one process,
// so that one call on a lent device measures each against the default on the same card in the same minutes
// (bench/gpu_bench.cpp's --tune; docs/gpu.md "Variants under measurement"). Every command and test runs the
// defaults; a variant becomes the default, or is deleted, once a device has measured it. Plain C++ (the .cu
// launchers read it too). Not synchronized: set it between runs, never during one.
#pragma once
#include <stdexcept>
#include <string>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

struct Tuning {
  // inner_slices' gate (gpu/blas.cpp): an item of at most slice_max_tiles output tiles of 32 x 32 and an
  // inner dimension of at least slice_min_k is cut, the count doubling while there are fewer than
  // slice_target_tiles tiles in all. Another gate changes which products are sliced, so their rounding.
  int slice_max_tiles = 64;
  int slice_min_k = 1024;
  int slice_target_tiles = 512;
  // gaussian_fill writes a Philox block's four entries with one vector store (the same values).
  bool vector_fill = false;
  // The Frobenius norms' max |A|, max |B| and their power-of-two factors in one launch instead of three
  // (operand_scales; the same values).
  bool fused_scales = false;
  // sample_dot over many blocks a sample, their partial sums added in an order fixed by the length alone,
  // instead of one block a sample (another order of the same sum: the value moves within double's
  // rounding).
  bool spread_dot = false;
};

inline Tuning& tuning() {
  static Tuning t;
  return t;
}

// Sets one field from "name=value" (the benchmark's --tune); throws std::invalid_argument naming what is
// wrong.
inline void set_tuning(Tuning& t, const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos) throw std::invalid_argument("--tune wants name=value: " + assignment);
  const std::string name = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size()) throw std::invalid_argument("--tune " + name + ": not an integer");
  if (name == "slice_max_tiles")
    t.slice_max_tiles = v;
  else if (name == "slice_min_k")
    t.slice_min_k = v;
  else if (name == "slice_target_tiles")
    t.slice_target_tiles = v;
  else if (name == "vector_fill")
    t.vector_fill = v != 0;
  else if (name == "fused_scales")
    t.fused_scales = v != 0;
  else if (name == "spread_dot")
    t.spread_dot = v != 0;
  else
    throw std::invalid_argument("--tune: unknown name " + name +
                                " (slice_max_tiles, slice_min_k, slice_target_tiles, vector_fill, "
                                "fused_scales, spread_dot)");
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
