// Natural logarithm of 16 floats in [2^-24, 1], for the bulk draws' Box-Muller radius (box_muller16.hpp):
// Eigen's plog_float bit for bit on that range, at about half its cost. Eigen's frexp handles denormals
// with compares and selects, and a last step maps 0, inf, NaN and negatives; here the inputs are
// normal, so the AVX-512 getmant/getexp instructions give the same mantissa and exponent exactly, and the
// special cases cannot occur. The reduction and polynomial are copied from Eigen 3.4.0,
// Eigen/src/Core/arch/Default/GenericPacketMathFunctions.h, plog_impl_float (lines 166-241; Mozilla Public
// License 2.0). tests/sim/test_draws_bits.cpp compares it with Eigen's plog on every input the draws
// produce (k 2^-24, k = 1 .. 2^24).
#pragma once

#if defined(__AVX512F__)
#include <Eigen/Core>

namespace normsim::sim {

inline Eigen::internal::Packet16f plog_unit16(const Eigen::internal::Packet16f& u) {
  using namespace Eigen::internal;
  using Packet = Packet16f;
  const Packet cst_1 = pset1<Packet>(1.0f);
  const Packet cst_neg_half = pset1<Packet>(-0.5f);
  const Packet cst_cephes_SQRTHF = pset1<Packet>(0.707106781186547524f);
  const Packet cst_cephes_log_p0 = pset1<Packet>(7.0376836292E-2f);
  const Packet cst_cephes_log_p1 = pset1<Packet>(-1.1514610310E-1f);
  const Packet cst_cephes_log_p2 = pset1<Packet>(1.1676998740E-1f);
  const Packet cst_cephes_log_p3 = pset1<Packet>(-1.2420140846E-1f);
  const Packet cst_cephes_log_p4 = pset1<Packet>(+1.4249322787E-1f);
  const Packet cst_cephes_log_p5 = pset1<Packet>(-1.6668057665E-1f);
  const Packet cst_cephes_log_p6 = pset1<Packet>(+2.0000714765E-1f);
  const Packet cst_cephes_log_p7 = pset1<Packet>(-2.4999993993E-1f);
  const Packet cst_cephes_log_p8 = pset1<Packet>(+3.3333331174E-1f);

  // u = m 2^e with m in [0.5, 1) (Eigen's pfrexp, exact for normal u).
  const Packet m = _mm512_getmant_ps(u, _MM_MANT_NORM_p5_1, _MM_MANT_SIGN_zero);
  Packet e = padd(_mm512_getexp_ps(u), cst_1);

  // Shift m from [0.5, 1) to [sqrt(1/2), sqrt(2)) and by -1: if m < SQRTHF, e -= 1 and x = m + m - 1,
  // else x = m - 1 (each exact, so this equals Eigen's masked form).
  const __mmask16 below = _mm512_cmp_ps_mask(m, cst_cephes_SQRTHF, _CMP_LT_OQ);
  Packet x = psub(m, cst_1);
  e = _mm512_mask_sub_ps(e, below, e, cst_1);
  x = _mm512_mask_add_ps(x, below, x, m);

  Packet x2 = pmul(x, x);
  Packet x3 = pmul(x2, x);

  // The polynomial of degree 8 in three parts, as Eigen evaluates it.
  Packet y, y1, y2;
  y = pmadd(cst_cephes_log_p0, x, cst_cephes_log_p1);
  y1 = pmadd(cst_cephes_log_p3, x, cst_cephes_log_p4);
  y2 = pmadd(cst_cephes_log_p6, x, cst_cephes_log_p7);
  y = pmadd(y, x, cst_cephes_log_p2);
  y1 = pmadd(y1, x, cst_cephes_log_p5);
  y2 = pmadd(y2, x, cst_cephes_log_p8);
  y = pmadd(y, x3, y1);
  y = pmadd(y, x3, y2);
  y = pmul(y, x3);

  y = pmadd(cst_neg_half, x2, y);
  x = padd(x, y);

  // Add the logarithm of the exponent back.
  const Packet cst_ln2 = pset1<Packet>(static_cast<float>(EIGEN_LN2));
  return pmadd(e, cst_ln2, x);
}

}  // namespace normsim::sim
#endif
