// Counter-based random numbers: every weight and input entry is a pure function of
// (seed, sample, layer, matrix, index), so results do not depend on threads or backend, and the CUDA
// backend draws exactly the same weights on the device.
// Philox4x32-10 (Salmon et al., SC'11 "Parallel random numbers: as easy as 1, 2, 3"); the constants and
// round structure are Random123's, and tests/sim/test_philox.cpp checks this against Random123's own
// implementation. Written out here so that the same inline code runs in CPU loops and CUDA kernels.
#pragma once
#include <cstdint>

#include "sim/hd.hpp"

namespace normsim::sim {

struct Philox4 {
  std::uint32_t v[4];
};

NORMSIM_HD Philox4 philox4x32_10(Philox4 ctr, std::uint32_t key0, std::uint32_t key1) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t(kM0) * ctr.v[0];
    const std::uint64_t p1 = std::uint64_t(kM1) * ctr.v[2];
    const Philox4 next{{std::uint32_t(p1 >> 32) ^ ctr.v[1] ^ key0, std::uint32_t(p1),
                        std::uint32_t(p0 >> 32) ^ ctr.v[3] ^ key1, std::uint32_t(p0)}};
    ctr = next;
    key0 += kW0;
    key1 += kW1;
  }
  return ctr;
}

// What a draw is for; part of the counter, so different matrices never share numbers.
enum class Stream : std::uint32_t {
  w1 = 0,
  w2 = 1,
  wgate = 2,
  wq = 3,
  wk = 4,
  wv = 5,
  wo = 6,
  cq = 7,  // cross-attention (decoder): query, key, value, output
  ck = 8,
  cv = 9,
  co = 10,
  wga = 11,      // the attention output gate's W_g (attention_gate)
  wrouter = 12,  // the router of a routed MLP (moe_experts > 0, sim/cpu/cpu_moe.hpp): d x E
  wemb = 13,     // the edge matrices (sim/edges.hpp): the embedding W_emb (layer word 0)
  wout = 14,     // and the readout W_out (layer word K)
  input_tokens = 16,
  input_common = 17,
  readout = 18,
  target = 19,
  encoder_tokens = 20,  // the decoder's fixed encoder output (sim/encoder_output.hpp)
  encoder_common = 21,
  token_ids = 22,       // vocab > 0: the input's token ids (sim/inputs.hpp token_id)
  jacobian_probe = 24,  // sim/jacobian_probes.hpp: probes of d x_K / d x_l
  block_probe = 25,     // and of each block's own Jacobian
  // update = "random": the direction dW of weight matrix w is stream update_base + w (sim/single_update.hpp).
  update_base = 32,
  // bias = true: the bias of weight matrix w is stream bias_base + w, its random update direction
  // bias_update_base + w (sim/stack.hpp param_stream).
  bias_base = 48,
  bias_update_base = 64,
};

// A stream word carrying an index in its upper 16 bits (the expert e of a routed MLP's weights): the stream
// ids above use bits 0-15 only, so index 0 is the stream itself and every draw without an index keeps its
// counter (and its bits: tests/data/ golden digests). Indices run to 65535.
inline constexpr std::uint32_t kStreamIndexShift = 16;
inline constexpr std::uint32_t kMaxStreamIndex = 0xFFFFu;
NORMSIM_HD constexpr Stream indexed_stream(Stream s, std::uint32_t index) {
  return static_cast<Stream>(static_cast<std::uint32_t>(s) | (index << kStreamIndexShift));
}

// The counter of entries [4*block, 4*block+3] of matrix `stream` of sublayer `layer` in `sample`.
NORMSIM_HD Philox4 philox_counter(std::uint32_t block, Stream stream, std::uint32_t layer,
                                  std::uint32_t sample) {
  return Philox4{{block, static_cast<std::uint32_t>(stream), layer, sample}};
}

}  // namespace normsim::sim
