// Sine and cosine of 16 floats with one shared range reduction, for the bulk draws' Box-Muller
// (box_muller16.hpp). Eigen's psin and pcos each reduce the argument and evaluate both polynomials, then
// keep one; this computes the reduction and the polynomials once and keeps both, so it gives exactly
// Eigen's bits for half the work. Copied from Eigen 3.4.0, Eigen/src/Core/arch/Default/
// GenericPacketMathFunctions.h, psincos_float (lines 619-741; Mozilla Public License 2.0), with its FMA
// branch (AVX-512 has FMA), without the Payne-Hanek branch for |x| >= 71476.0625 (Box-Muller's angles lie
// in [0, 2 pi)), and without its optimize("-fno-unsafe-math-optimizations") attribute, which only matters
// under -ffast-math (normsim does not use it) and would stop inlining. tests/sim/test_draws_bits.cpp
// compares it with Eigen's psin and pcos on every angle the draws can produce.
#pragma once

#if defined(__AVX512F__)
#include <Eigen/Core>
#if !defined(EIGEN_HAS_SINGLE_INSTRUCTION_MADD)
#error \
    "sincos16.hpp copies Eigen's FMA branch; Eigen's AVX-512 packets define EIGEN_HAS_SINGLE_INSTRUCTION_MADD"
#endif

namespace normsim::sim {

// sin(x) and cos(x) lane by lane, for |x| < 71476.0625: Eigen's psin_float and pcos_float bit for bit.
inline void psincos16(const Eigen::internal::Packet16f& _x, Eigen::internal::Packet16f& sin_x,
                      Eigen::internal::Packet16f& cos_x) {
  using namespace Eigen::internal;
  using Packet = Packet16f;
  using PacketI = Packet16i;
  const Packet cst_2oPI = pset1<Packet>(0.636619746685028076171875f);  // 2/PI
  const Packet cst_rounding_magic = pset1<Packet>(12582912);           // 2^23 for rounding
  const PacketI csti_1 = pset1<PacketI>(1);
  const Packet cst_sign_mask = pset1frombits<Packet>(0x80000000u);

  Packet x = pabs(_x);
  Packet y = pmul(x, cst_2oPI);
  Packet y_round = padd(y, cst_rounding_magic);
  EIGEN_OPTIMIZATION_BARRIER(y_round)
  PacketI y_int = preinterpret<PacketI>(y_round);  // last 23 digits represent integer (if abs(x)<2^24)
  y = psub(y_round, cst_rounding_magic);           // nearest integer to x*4/pi

  // Reduce x by y octants to get: -Pi/4 <= x <= +Pi/4 ("extended precision modular arithmetic", FMA).
  x = pmadd(y, pset1<Packet>(-1.57079601287841796875f), x);
  x = pmadd(y, pset1<Packet>(-3.1391647326017846353352069854736328125e-07f), x);
  x = pmadd(y, pset1<Packet>(-5.390302529957764765544681040410068817436695098876953125e-15f), x);

  // sin: sign = second_bit(y_int) xor signbit(_x); cos: sign = second_bit(y_int+1).
  Packet sin_sign = pxor(_x, preinterpret<Packet>(plogical_shift_left<30>(y_int)));
  Packet cos_sign = preinterpret<Packet>(plogical_shift_left<30>(padd(y_int, csti_1)));
  sin_sign = pand(sin_sign, cst_sign_mask);
  cos_sign = pand(cos_sign, cst_sign_mask);

  // The polynomial selection mask from the second bit of y_int.
  Packet poly_mask = preinterpret<Packet>(pcmp_eq(pand(y_int, csti_1), pzero(y_int)));

  Packet x2 = pmul(x, x);

  // The cos(x) polynomial (-Pi/4 <= x <= Pi/4).
  Packet y1 = pset1<Packet>(2.4372266125283204019069671630859375e-05f);
  y1 = pmadd(y1, x2, pset1<Packet>(-0.00138865201734006404876708984375f));
  y1 = pmadd(y1, x2, pset1<Packet>(0.041666619479656219482421875f));
  y1 = pmadd(y1, x2, pset1<Packet>(-0.5f));
  y1 = pmadd(y1, x2, pset1<Packet>(1.f));

  // The sin(x) polynomial (-Pi/4 <= x <= Pi/4).
  Packet y2 = pset1<Packet>(-0.0001959234114083702898469196984621021329076029360294342041015625f);
  y2 = pmadd(y2, x2, pset1<Packet>(0.0083326873655616851693794799871284340042620897293090820312500000f));
  y2 = pmadd(y2, x2, pset1<Packet>(-0.1666666203982298255503735617821803316473960876464843750000000000f));
  y2 = pmul(y2, x2);
  y2 = pmadd(y2, x, x);

  sin_x = pxor(pselect(poly_mask, y2, y1), sin_sign);
  cos_x = pxor(pselect(poly_mask, y1, y2), cos_sign);
}

}  // namespace normsim::sim
#endif
