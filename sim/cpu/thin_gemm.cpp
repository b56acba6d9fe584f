// The kernels of thin_gemm.hpp. Both products are one computation, C'(p, q) (+)= sum_k V(p, k) S(k, q),
// with V read in vectors of 16 along p and S broadcast: for A W, p runs along W's columns (V = W, S = A)
// and C' = C^T; for A W^T, p runs along tokens (V = A^T, S = W^T) and C' = C.
#if defined(__AVX512F__)
// GCC 12 flags its own avx512fintrin.h, inlined from the transposes' interleavings, as reading an
// uninitialized variable: a known false positive (GCC bug 105593), silenced for this file, as in
// sim/draws.cpp.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "sim/cpu/thin_gemm.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace normsim::sim {

namespace {

using Index = Eigen::Index;
constexpr int kVectors = 4;              // a tile is kVectors x 16 entries along p ...
constexpr int kCols = 6;                 // ... by kCols along q: 24 accumulators of the 32 registers
constexpr Index kDepthAW = 256;          // A W: k per pass, so a 64 x 256 block of W is reused from cache
constexpr Index kStrip = 16 * kVectors;  // A W: W's columns per row of tiles
constexpr Index kPrefetchRows = 32;      // A W: how far ahead the strip's copy asks for W's rows

struct Operands {
  const float* v;
  Index sv;  // V(p, k) = v[p + k sv]
  const float* s;
  Index sk, sq;  // S(k, q) = s[k sk + q sq]
};

// C'(p, q) = c[p + q ld] (contiguous along p: A W) or c[p ld + q] (along q: A W^T).
template <bool AlongP>
struct Out {
  float* c;
  Index ld;
};

template <int MV>
__mmask16 last_mask(Index rows) {
  return __mmask16((1u << (rows - 16 * (MV - 1))) - 1u);
}

// C' through a buffer laid out along p, for the tile at (p0, q0) with `rows` entries along p: where C'
// is laid out along q (A W^T), its entries are copied in before and out after the tile's sums, once per
// tile since A W^T's tiles run over all of k.
template <int MV, int NR>
struct Staging {
  alignas(64) float buf[NR][16 * MV];
  void read(const Out<false>& o, Index p0, Index q0, Index rows) {
    for (Index p = 0; p < rows; ++p)
      for (int j = 0; j < NR; ++j) buf[j][p] = o.c[(p0 + p) * o.ld + q0 + j];
  }
  void write(const Out<false>& o, Index p0, Index q0, Index rows) const {
    for (Index p = 0; p < rows; ++p)
      for (int j = 0; j < NR; ++j) o.c[(p0 + p) * o.ld + q0 + j] = buf[j][p];
  }
};

// The address `floats` past p, for a prefetch, which never faults: it may lie past W's end, where pointer
// arithmetic would be undefined, so it is computed as an integer.
inline const char* ahead(const float* p, Index floats) {
  return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) +
                                       std::uintptr_t(floats) * sizeof(float));
}

// One tile over k in [k0, k0 + kc): a fused multiply-add per entry and k, k ascending, the sums starting
// from C' (load) or from zero. Inlined into its caller: compiled on its own, GCC 12 kept the 24
// accumulators in memory as well as in registers, a store per multiply-add (a third of the speed).
template <int MV, int NR, bool AlongP>
[[gnu::always_inline]] inline void tile(const Out<AlongP>& o, const Operands& x, Index p0, Index q0,
                                        Index rows, Index k0, Index kc, bool load) {
  const __mmask16 last = last_mask<MV>(rows);
  const auto mask = [&](int r) { return r == MV - 1 ? last : __mmask16(0xFFFF); };
  float* const c = AlongP ? o.c + p0 + q0 * o.ld : nullptr;
  Staging<MV, NR> st{};
  if (load && !AlongP) st.read(Out<false>{o.c, o.ld}, p0, q0, rows);
  __m512 acc[MV][NR];
  for (int j = 0; j < NR; ++j)
    for (int r = 0; r < MV; ++r) {
      if constexpr (AlongP)
        acc[r][j] = load ? _mm512_maskz_loadu_ps(mask(r), c + 16 * r + j * o.ld) : _mm512_setzero_ps();
      else
        acc[r][j] = load ? _mm512_load_ps(st.buf[j] + 16 * r) : _mm512_setzero_ps();
    }
  const float* v = x.v + p0 + k0 * x.sv;
  const float* s = x.s + k0 * x.sk + q0 * x.sq;
  const Index sv = x.sv, sk = x.sk, sq = x.sq;
  for (Index k = 0; k < kc; ++k, v += sv, s += sk) {
    // A W^T reads W's rows in place, and in the backward W comes from memory (kept since the forward):
    // each line of the next tile's rows is asked for as this tile reaches it, a tile's time ahead (W1
    // 0.684 -> 0.627 s, means of 5 interleaved runs).
    if constexpr (!AlongP)
      if ((k & 15) == 0)
        for (int j = 0; j < NR; ++j) _mm_prefetch(ahead(s, (kCols + j) * sq), _MM_HINT_T1);
    __m512 a[MV];
    for (int r = 0; r < MV; ++r) a[r] = _mm512_maskz_loadu_ps(mask(r), v + 16 * r);
    for (int j = 0; j < NR; ++j) {
      const __m512 b = _mm512_set1_ps(s[j * sq]);
      for (int r = 0; r < MV; ++r) acc[r][j] = _mm512_fmadd_ps(a[r], b, acc[r][j]);
    }
  }
  for (int j = 0; j < NR; ++j)
    for (int r = 0; r < MV; ++r)
      if constexpr (AlongP)
        _mm512_mask_storeu_ps(c + 16 * r + j * o.ld, mask(r), acc[r][j]);
      else
        _mm512_store_ps(st.buf[j] + 16 * r, acc[r][j]);
  if constexpr (!AlongP) st.write(o, p0, q0, rows);
}

// Every tile of one row of tiles (p0, `rows` along p) across q columns.
template <int MV, bool AlongP>
void row_of_tiles(const Out<AlongP>& o, const Operands& x, Index p0, Index rows, Index q, Index k0, Index kc,
                  bool load) {
  Index q0 = 0;
  for (; q0 + kCols <= q; q0 += kCols) tile<MV, kCols>(o, x, p0, q0, rows, k0, kc, load);
  switch (q - q0) {
    case 5:
      return tile<MV, 5>(o, x, p0, q0, rows, k0, kc, load);
    case 4:
      return tile<MV, 4>(o, x, p0, q0, rows, k0, kc, load);
    case 3:
      return tile<MV, 3>(o, x, p0, q0, rows, k0, kc, load);
    case 2:
      return tile<MV, 2>(o, x, p0, q0, rows, k0, kc, load);
    case 1:
      return tile<MV, 1>(o, x, p0, q0, rows, k0, kc, load);
    default:
      return;
  }
}

// One row of tiles, `rows` along p from p0, with the tile height that covers them.
template <bool AlongP>
void row_of_tiles_of(const Out<AlongP>& o, const Operands& x, Index p0, Index rows, Index q, Index k0,
                     Index kc, bool load) {
  switch ((rows + 15) / 16) {
    case 1:
      return row_of_tiles<1>(o, x, p0, rows, q, k0, kc, load);
    case 2:
      return row_of_tiles<2>(o, x, p0, rows, q, k0, kc, load);
    case 3:
      return row_of_tiles<3>(o, x, p0, rows, q, k0, kc, load);
    default:
      return row_of_tiles<4>(o, x, p0, rows, q, k0, kc, load);
  }
}

// Every tile for k in [k0, k0 + kc), row of tiles by row of tiles along p.
void pass(const Out<false>& o, const Operands& x, Index p, Index q, Index k0, Index kc, bool load) {
  for (Index p0 = 0; p0 < p; p0 += kStrip)
    row_of_tiles_of(o, x, p0, std::min(kStrip, p - p0), q, k0, kc, load);
}

// W's strips copied from W in memory (thin_gemm_aw).
class StoredStrips final : public WeightStrips {
 public:
  StoredStrips(const float* w, Index ldw) : w_(w), ldw_(ldw) {}
  void fill(Index k0, Index kc, Index p0, Index cols, float* strip) const override {
    const float* w = w_ + p0 + k0 * ldw_;
    for (Index k = 0; k < kc; ++k)
      for (Index i = 0; i < cols; i += 16) {
        const __mmask16 m = cols - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (cols - i)) - 1u);
        // W is fresh from its draw (in L3) and the strip's rows lie a stride apart: asking for the row
        // kPrefetchRows ahead took W1 from 0.687 to 0.670 s (means of 4 interleaved runs; 8 and 16 ahead
        // gave 0.688 and 0.678).
        _mm_prefetch(ahead(w + k * ldw_ + i, kPrefetchRows * ldw_), _MM_HINT_T0);
        _mm512_storeu_ps(strip + k * kStrip + i, _mm512_maskz_loadu_ps(m, w + k * ldw_ + i));
      }
  }

 private:
  const float* w_;
  Index ldw_;
};

// dst[j ldd + i] = src[i lds + j] for i, j < 16: a 16 x 16 block transposed in registers, in the four
// rounds of pairwise interleaving (floats, pairs, 128-bit quarters, halves) the x86 transposes use.
inline void transpose16(const float* src, Index lds, float* dst, Index ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]),
                  c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xdd);
  }
  for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ldd, r[i]);
}

}  // namespace

// A W, pass by pass over k: each strip of W (kc rows x kStrip columns) is first filled into a contiguous
// buffer that its row of tiles then reads. Read in place, the strip's rows lie ldw apart (8 KB for width
// 2048), a stride the caches serve poorly: every tile of the row re-read the strip at 0.65-0.70 of A W^T's
// speed, copied at 0.78-0.85 (same run, 2 threads). The buffer holds W's values, so the products have the
// same bits whichever WeightStrips fills it.
void thin_gemm_aw_from(float* c, Index ldc, const float* a, Index lda, const WeightStrips& w, Index T,
                       Index k, Index n, bool accumulate) {
  alignas(64) thread_local float strip[kDepthAW * kStrip];
  // k = 0 without accumulating is one empty pass: C = 0.
  for (Index k0 = 0; k0 < k || (k0 == 0 && !accumulate); k0 += kDepthAW) {
    const Index kc = std::min(kDepthAW, k - k0);
    for (Index p0 = 0; p0 < n; p0 += kStrip) {
      const Index cols = std::min(kStrip, n - p0);
      w.fill(k0, kc, p0, cols, strip);
      const Operands packed{strip, kStrip, a + k0, 1, lda};
      row_of_tiles_of(Out<true>{c + p0, ldc}, packed, 0, cols, T, 0, kc, accumulate || k0 > 0);
    }
  }
}

void thin_gemm_aw(float* c, Index ldc, const float* a, Index lda, const float* w, Index ldw, Index T, Index k,
                  Index n, bool accumulate) {
  thin_gemm_aw_from(c, ldc, a, lda, StoredStrips(w, ldw), T, k, n, accumulate);
}

// A^T's row stride is T; A W^T's p-tiles run over all of k, so C (laid out along q) is read and
// written once per tile.
void thin_gemm_awt(float* c, Index ldc, const float* at, const float* w, Index ldw, Index T, Index k, Index n,
                   bool accumulate) {
  // One pass over all of k: an empty one where k = 0, giving C = 0 unless accumulating.
  if (k > 0 || !accumulate) pass(Out<false>{c, ldc}, Operands{at, T, w, 1, ldw}, T, n, 0, k, accumulate);
}

void transpose_for_awt(float* at, const float* a, Index lda, Index T, Index k) {
  constexpr Index kTile = 16;
  for (Index k0 = 0; k0 < k; k0 += kTile)
    for (Index t0 = 0; t0 < T; t0 += kTile) {
      const Index kc = std::min(kTile, k - k0), tc = std::min(kTile, T - t0);
      if (kc == kTile && tc == kTile) {
        transpose16(a + t0 * lda + k0, lda, at + k0 * T + t0, T);
        continue;
      }
      for (Index i = 0; i < kc; ++i)
        for (Index t = 0; t < tc; ++t) at[(k0 + i) * T + t0 + t] = a[(t0 + t) * lda + k0 + i];
    }
}

}  // namespace normsim::sim
#endif
