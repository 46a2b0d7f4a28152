//===- small_gemm.cpp - Register-blocked products of small matrices ------===//

#include "small_gemm.h"

#include "avx512.h"
#include "sgemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace lmc::rt {
namespace {

/// A tile of C: kTileRows rows of kTileCols columns, two 16-float vectors
/// per row: 16 accumulators, so that the two FMA units always have
/// independent sums to work on (4 cycles of latency each), and one
/// broadcast of A's element per row and step of the sum.
constexpr int64_t kTileRows = kSmallGemmTileRows, kTileCols = 32;

/// The library's view of a strided operand: not transposed when its rows
/// are contiguous, else transposed, with the other stride as its leading
/// dimension.
struct LibraryOperand {
  CBLAS_TRANSPOSE op;
  blasint ld;
};

LibraryOperand libraryOperand(const StridedMatrix &m) {
  if (m.col == 1)
    return {CblasNoTrans, blasint(m.row)};
  if (m.row == 1)
    return {CblasTrans, blasint(m.col)};
  std::fprintf(stderr,
               "lmc runtime: small product operand with no unit stride "
               "(row %lld, col %lld) [%s:%d]\n",
               (long long)m.row, (long long)m.col, __FILE__, __LINE__);
  std::abort();
}

void libraryGemm(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a,
                 StridedMatrix b, float *c, int64_t ldc, bool accumulate) {
  const LibraryOperand la = libraryOperand(a), lb = libraryOperand(b);
  sgemm(CblasRowMajor, la.op, lb.op, blasint(m), blasint(n), blasint(k), alpha,
        a.p, la.ld, b.p, lb.ld, accumulate ? 1.0f : 0.0f, c, blasint(ldc));
}

#if defined(__x86_64__)

/// sum[r][v] = the sum over s < k of A(r, s) * B's row s, vector v (B's
/// rows `bRow` floats apart), for the rows [0, Rows) of a tile: one
/// broadcast of A per row and Vectors loads of B per step of the sum. Loops
/// over rows unrolled, so that the sums stay in registers.
template <int Rows, int Vectors>
LMC_AVX512 inline __attribute__((always_inline)) void
sumTile(__m512 (&sum)[Rows][Vectors], const float *a, int64_t aRow,
        int64_t aCol, const float *b, int64_t bRow, int64_t k) {
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r)
    for (int v = 0; v < Vectors; ++v)
      sum[r][v] = _mm512_setzero_ps();
  for (int64_t s = 0; s < k; ++s) {
    __m512 row[Vectors];
    for (int v = 0; v < Vectors; ++v)
      row[v] = _mm512_loadu_ps(b + s * bRow + 16 * v);
    const float *as = a + s * aCol;
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      const __m512 x = _mm512_set1_ps(as[r * aRow]);
      for (int v = 0; v < Vectors; ++v)
        sum[r][v] = _mm512_fmadd_ps(x, row[v], sum[r][v]);
    }
  }
}

/// Rows [0, Rows) of a tile: C = alpha * A panel (+ C), the panel k rows of
/// kTileCols floats `panelRow` apart; with `Half`, only its first 16
/// columns (a tile whose rows need no more of the panel: half the work).
/// `Scaled`: alpha is applied (else it is 1). `store` masks the columns
/// that exist.
template <int Rows, bool Half, bool Scaled>
LMC_AVX512 void tile(const float *a, int64_t aRow, int64_t aCol,
                     const float *panel, int64_t panelRow, int64_t k,
                     float alpha, float *c, int64_t ldc, bool accumulate,
                     __mmask16 store0, __mmask16 store1) {
  constexpr int kVectors = Half ? 1 : 2;
  __m512 sum[Rows][kVectors];
  sumTile(sum, a, aRow, aCol, panel, panelRow, k);
  const __m512 scale = _mm512_set1_ps(alpha);
  const __mmask16 store[2] = {store0, store1};
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
    float *row = c + r * ldc;
    for (int v = 0; v < kVectors; ++v) {
      __m512 value = Scaled ? _mm512_mul_ps(sum[r][v], scale) : sum[r][v];
      if (accumulate)
        value = _mm512_add_ps(
            value, _mm512_maskz_loadu_ps(store[v], row + 16 * v));
      _mm512_mask_storeu_ps(row + 16 * v, store[v], value);
    }
  }
}

using TileFn = void (*)(const float *, int64_t, int64_t, const float *, int64_t,
                        int64_t, float, float *, int64_t, bool, __mmask16,
                        __mmask16);

/// tile<Rows, Half, Scaled> for Rows in [1, kTileRows].
template <bool Half, bool Scaled>
constexpr TileFn kTileRowsOf[kTileRows] = {
    tile<1, Half, Scaled>, tile<2, Half, Scaled>, tile<3, Half, Scaled>,
    tile<4, Half, Scaled>, tile<5, Half, Scaled>, tile<6, Half, Scaled>,
    tile<7, Half, Scaled>, tile<8, Half, Scaled>};

/// The tile kernel for `rows` rows, half a panel or all of it, scaled by
/// alpha or not (alpha 1: one multiply per accumulator less).
TileFn tileKernel(int64_t rows, bool half, bool scaled) {
  const TileFn *table = half ? (scaled ? kTileRowsOf<true, true>
                                       : kTileRowsOf<true, false>)
                             : (scaled ? kTileRowsOf<false, true>
                                       : kTileRowsOf<false, false>);
  return table[rows - 1];
}

/// A wide tile: kWideRows x 64 of C (four vectors a row), 24 accumulators,
/// a broadcast of A per row and four loads of B per step for 24
/// multiply-adds, where the 8 x 32 tile needs one broadcast per two. For
/// the products whose C is a head wide (64 columns) and whose columns need
/// no bounds: the attention's E V, dV, dQ and dK.
constexpr int64_t kWideRows = 6, kWideCols = 64;

/// Rows [0, Rows) of a wide tile: C = alpha * A B (+ C), B's rows of
/// kWideCols floats `bRow` apart (read in place). `Scaled`: alpha is
/// applied.
template <int Rows, bool Scaled>
LMC_AVX512 void wideTile(const float *a, int64_t aRow, int64_t aCol,
                         const float *b, int64_t bRow, int64_t k, float alpha,
                         float *c, int64_t ldc, bool accumulate) {
  constexpr int kVectors = kWideCols / 16;
  __m512 sum[Rows][kVectors];
  sumTile(sum, a, aRow, aCol, b, bRow, k);
  const __m512 scale = _mm512_set1_ps(alpha);
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r)
    for (int v = 0; v < kVectors; ++v) {
      float *to = c + r * ldc + 16 * v;
      __m512 value = Scaled ? _mm512_mul_ps(sum[r][v], scale) : sum[r][v];
      if (accumulate)
        value = _mm512_add_ps(value, _mm512_loadu_ps(to));
      _mm512_storeu_ps(to, value);
    }
}

using WideTileFn = void (*)(const float *, int64_t, int64_t, const float *,
                            int64_t, int64_t, float, float *, int64_t, bool);

/// wideTile<Rows, Scaled> for Rows in [1, kWideRows].
template <bool Scaled>
constexpr WideTileFn kWideRowsOf[kWideRows] = {
    wideTile<1, Scaled>, wideTile<2, Scaled>, wideTile<3, Scaled>,
    wideTile<4, Scaled>, wideTile<5, Scaled>, wideTile<6, Scaled>};

/// The union of the terms of the bounds' tiles that rows [i0, i0 + rows)
/// fall in (all k without bounds).
Span termsOfRows(const TileBounds &bounds, int64_t i0, int64_t rows,
                 int64_t k) {
  if (!bounds.terms)
    return {0, k};
  Span all{k, 0};
  for (int64_t t = i0 / kTileRows; t <= (i0 + rows - 1) / kTileRows; ++t) {
    const Span terms = bounds.terms[t];
    if (terms.begin < terms.end) {
      all.begin = std::min(all.begin, terms.begin);
      all.end = std::max(all.end, terms.end);
    }
  }
  return all.begin < all.end ? all : Span{0, 0};
}

/// C in wide tiles: n a multiple of kWideCols, B's rows contiguous, no
/// column bounds. A tile may span two of the bounds' tiles and then sums
/// the terms of both; the extra ones are zero (TileBounds), and a zero
/// term added to a sum that started at +0 leaves its bits.
LMC_AVX512 void wideGemm(int64_t m, int64_t n, int64_t k, float alpha,
                         StridedMatrix a, StridedMatrix b, float *c,
                         int64_t ldc, bool accumulate,
                         const TileBounds &bounds) {
  const WideTileFn *kernels =
      alpha != 1.0f ? kWideRowsOf<true> : kWideRowsOf<false>;
  for (int64_t j0 = 0; j0 < n; j0 += kWideCols)
    for (int64_t i0 = 0; i0 < m; i0 += kWideRows) {
      const int64_t rows = std::min(kWideRows, m - i0);
      const Span terms = termsOfRows(bounds, i0, rows, k);
      kernels[rows - 1](a.p + i0 * a.row + terms.begin * a.col, a.row, a.col,
                        b.p + terms.begin * b.row + j0, b.row,
                        terms.end - terms.begin, alpha, c + i0 * ldc + j0,
                        ldc, accumulate);
    }
}

/// The low `n` bits of a 16-bit mask (all for n >= 16, none for n <= 0).
__mmask16 lowBits(int64_t n) {
  return n >= 16  ? __mmask16(0xFFFF)
         : n <= 0 ? __mmask16(0)
                  : __mmask16((1u << n) - 1);
}

LMC_AVX512 void registerGemm(int64_t m, int64_t n, int64_t k, float alpha,
                             StridedMatrix a, StridedMatrix b, float *c,
                             int64_t ldc, bool accumulate,
                             const TileBounds &bounds) {
  if (n % kWideCols == 0 && b.col == 1 && !bounds.columns)
    return wideGemm(m, n, k, alpha, a, b, c, ldc, accumulate, bounds);
  thread_local std::vector<float> packed;
  for (int64_t j0 = 0; j0 < n; j0 += kTileCols) {
    const int64_t cols = std::min(kTileCols, n - j0);
    // The panel: B's columns [j0, j0 + cols) as k rows of kTileCols floats,
    // read in place when they are, packed (zero-padded) when not.
    const float *panel = b.p + j0 * b.col;
    int64_t panelRow = b.row;
    if (b.col != 1 || cols < kTileCols) {
      packed.resize(size_t(k * kTileCols));
      for (int64_t s = 0; s < k; ++s) {
        float *to = packed.data() + s * kTileCols;
        const float *from = b.p + s * b.row + j0 * b.col;
        for (int64_t j = 0; j < cols; ++j)
          to[j] = from[j * b.col];
        std::fill(to + cols, to + kTileCols, 0.0f);
      }
      panel = packed.data();
      panelRow = kTileCols;
    }
    const __mmask16 store0 = lowBits(cols), store1 = lowBits(cols - 16);
    for (int64_t i0 = 0, t = 0; i0 < m; i0 += kTileRows, ++t) {
      if (bounds.columns &&
          (bounds.columns[t].end <= j0 || bounds.columns[t].begin >= j0 + cols))
        continue;
      // The panel's upper half left unwritten when the tile needs none of
      // it (a causal mask's diagonal tiles).
      const bool half = cols <= 16 || (bounds.columns &&
                                       bounds.columns[t].end <= j0 + 16);
      const Span terms = bounds.terms ? bounds.terms[t] : Span{0, k};
      const int64_t rows = std::min(kTileRows, m - i0);
      tileKernel(rows, half, alpha != 1.0f)(
          a.p + i0 * a.row + terms.begin * a.col, a.row, a.col,
          panel + terms.begin * panelRow, panelRow,
          std::max<int64_t>(terms.end - terms.begin, 0), alpha,
          c + i0 * ldc + j0, ldc, accumulate, store0, store1);
    }
  }
}

/// A 16 x 16 block, rows ldFrom apart, transposed into rows ldTo apart:
/// pairs of rows interleaved by floats, then by pairs of floats, then by
/// 128-bit lanes twice.
LMC_AVX512 void transposeBlock(const float *from, int64_t ldFrom, float *to,
                               int64_t ldTo) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_loadu_ps(from + i * ldFrom);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]),
                  c = _mm512_castps_pd(t[i + 2]),
                  d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
  for (int i = 0; i < 16; ++i)
    _mm512_storeu_ps(to + i * ldTo, r[i]);
}

/// The register kernel on AVX-512 CPUs, unless LMC_SMALL_GEMM=library
/// asks for the path other CPUs take (so that it is tested here too).
bool useRegisterKernel() {
  static const bool use = runsAvx512("LMC_SMALL_GEMM", "library");
  return use;
}
#endif

/// The elements of rows [0, rows) and columns [c0, cols), and of rows
/// [r0, rows) and columns [0, c0), one at a time: what 16 x 16 blocks
/// leave.
void transposeRest(const float *from, int64_t ldFrom, int64_t rows,
                   int64_t cols, int64_t r0, int64_t c0, float *to,
                   int64_t ldTo) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = i < r0 ? c0 : 0; j < cols; ++j)
      to[j * ldTo + i] = from[i * ldFrom + j];
}

} // namespace

void transposeMatrix(const float *from, int64_t ldFrom, int64_t rows,
                     int64_t cols, float *to, int64_t ldTo) {
  int64_t r0 = 0, c0 = 0;
#if defined(__x86_64__)
  if (useRegisterKernel()) {
    r0 = rows / 16 * 16;
    c0 = cols / 16 * 16;
    for (int64_t i = 0; i < r0; i += 16)
      for (int64_t j = 0; j < c0; j += 16)
        transposeBlock(from + i * ldFrom + j, ldFrom, to + j * ldTo + i, ldTo);
  }
#endif
  transposeRest(from, ldFrom, rows, cols, r0, c0, to, ldTo);
}

void smallGemm(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a,
               StridedMatrix b, float *c, int64_t ldc, bool accumulate,
               const TileBounds &bounds) {
  if (m <= 0 || n <= 0)
    return;
#if defined(__x86_64__)
  if (useRegisterKernel())
    return registerGemm(m, n, k, alpha, a, b, c, ldc, accumulate, bounds);
#endif
  if (k <= 0) { // the library rejects k = 0: an empty sum
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  libraryGemm(m, n, k, alpha, a, b, c, ldc, accumulate);
}

} // namespace lmc::rt
