// The bf16 rounding of a float32's bits, written once for the CPU (sim/bf16.hpp) and the CUDA kernel
// (gpu/ops/round_to_bf16.cu): round to nearest, ties to even, at 16 dropped mantissa bits, as
// __float2bfloat16_rn (cuda_bf16.hpp) rounds. bf16 has float32's exponent range, so subnormals round on the
// same bit boundary and a finite value past bf16's largest (0x7F7F'FFFF) carries into the exponent and
// becomes an infinity; NaN is kept NaN (quieted, sign kept), since the rounding bias could carry its payload
// into an infinity's bits.
#pragma once
#include <cstdint>

#include "sim/hd.hpp"

namespace normsim::sim {

// The bits of the float32 that holds x's bf16 rounding (its low 16 bits zero), from x's bits.
NORMSIM_HD std::uint32_t bf16_rounded_bits(std::uint32_t u) {
  if ((u & 0x7FFF'FFFFu) > 0x7F80'0000u)
    u |= 0x0040'0000u;
  else
    u += 0x7FFFu + ((u >> 16) & 1u);
  return u & 0xFFFF'0000u;
}

}  // namespace normsim::sim
