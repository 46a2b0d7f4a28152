// The attention kernel's products (runtime/kernels/small_gemm.h) against a
// double-precision triple loop, on shapes that leave partial tiles and
// panels, every way of reading the operands, and with the bounds that
// skip columns and terms; and the transposition against its definition.
#include "kernels/avx512.h"
#include "kernels/small_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using lmc::rt::smallGemm;
using lmc::rt::Span;
using lmc::rt::StridedMatrix;
using lmc::rt::TileBounds;

std::vector<float> random(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// An m x n matrix stored row-major (rows ld apart) or, `transposed`,
/// column-major (columns ld apart), padded so that reading past either
/// would read someone else's numbers.
struct Stored {
  std::vector<float> data;
  StridedMatrix view;

  Stored(int64_t m, int64_t n, bool transposed, std::mt19937 &rng) {
    int64_t ld = (transposed ? m : n) + 3;
    data = random(size_t((transposed ? n : m) * ld), rng);
    view = transposed ? StridedMatrix{data.data(), 1, ld}
                      : StridedMatrix{data.data(), ld, 1};
  }
  double at(int64_t i, int64_t j) const {
    return view.p[i * view.row + j * view.col];
  }
};

/// alpha * sum over terms [t0, t1) of A(i, s) B(s, j), in double.
double product(const Stored &a, const Stored &b, int64_t i, int64_t j,
               int64_t t0, int64_t t1, float alpha) {
  double sum = 0;
  for (int64_t s = t0; s < t1; ++s)
    sum += a.at(i, s) * b.at(s, j);
  return alpha * sum;
}

void expectProduct(int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                   bool accumulate) {
  std::mt19937 rng(unsigned(m * 1000 + n * 10 + k));
  const Stored a(m, k, ta, rng), b(k, n, tb, rng);
  const int64_t ldc = n + 5;
  std::vector<float> c = random(size_t(m * ldc), rng), before = c;
  const float alpha = 0.375f;
  smallGemm(m, n, k, alpha, a.view, b.view, c.data(), ldc, accumulate);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = product(a, b, i, j, 0, k, alpha) +
                    (accumulate ? before[size_t(i * ldc + j)] : 0.0);
      EXPECT_NEAR(c[size_t(i * ldc + j)], want, 1e-5 * (1 + std::fabs(want)))
          << m << "x" << n << "x" << k << " ta " << ta << " tb " << tb
          << " at (" << i << ", " << j << ")";
    }
    for (int64_t j = n; j < ldc; ++j) // the row's padding stays as it was
      EXPECT_EQ(c[size_t(i * ldc + j)], before[size_t(i * ldc + j)]);
  }
}

TEST(SmallGemm, EveryLayoutAndPartialTiles) {
  // 64 x 64 x 64: whole tiles; 13 x 45 x 70: a partial tile of rows and a
  // partial panel of columns; 1 x 1 x 1 and 9 x 17 x 3: the smallest.
  const int64_t shapes[][3] = {
      {64, 64, 64}, {13, 45, 70}, {1, 1, 1}, {9, 17, 3}};
  for (auto [m, n, k] : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool accumulate : {false, true})
          expectProduct(m, n, k, ta, tb, accumulate);
}

TEST(SmallGemm, NoTermsIsAnEmptySum) {
  std::mt19937 rng(3);
  const Stored a(5, 1, false, rng), b(1, 7, false, rng);
  std::vector<float> c = random(35, rng), before = c;
  smallGemm(5, 7, 0, 1.0f, a.view, b.view, c.data(), 7, true);
  EXPECT_EQ(c, before);
  smallGemm(5, 7, 0, 1.0f, a.view, b.view, c.data(), 7, false);
  EXPECT_EQ(c, std::vector<float>(35, 0.0f));
}

// Tile t of 8 rows computes only the panels of 32 columns its bounds
// touch, summing only its terms: tile 0 columns [0, 10) over terms
// [2, 20), tile 1 columns [40, 70) over [0, 40), tile 2 nothing. (The
// library's path, LMC_SMALL_GEMM=library, computes everything: callers
// only bound what is zero, SkippedZeroTermsLeaveTheSameBits; it is the
// path of every CPU without AVX-512F.)
TEST(SmallGemm, BoundsSkipColumnsAndTerms) {
  if (!lmc::rt::runsAvx512("LMC_SMALL_GEMM", "library"))
    GTEST_SKIP() << "the register kernel runs on AVX-512F CPUs only (this "
                    "one lacks it, or LMC_SMALL_GEMM=library): the "
                    "library's path ignores the bounds";
  const int64_t m = 20, n = 70, k = 40;
  std::mt19937 rng(7);
  const Stored a(m, k, false, rng), b(k, n, true, rng);
  const Span columns[] = {{0, 10}, {40, 70}, {0, 0}};
  const Span terms[] = {{2, 20}, {0, 40}, {0, 0}};
  std::vector<float> c(size_t(m * n), 1234.0f);
  smallGemm(m, n, k, 1.0f, a.view, b.view, c.data(), n, false,
            TileBounds{columns, terms});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t t = i / lmc::rt::kSmallGemmTileRows;
      // Whole panels of 32, or the lower half of one: [0, 16) for tile 0
      // (its columns end at 10), [32, 70) for tile 1.
      const bool computed = (t == 0 && j < 16) || (t == 1 && j >= 32);
      if (!computed) {
        EXPECT_EQ(c[size_t(i * n + j)], 1234.0f) << i << ", " << j;
        continue;
      }
      double want = product(a, b, i, j, terms[t].begin, terms[t].end, 1.0f);
      EXPECT_NEAR(c[size_t(i * n + j)], want, 1e-5 * (1 + std::fabs(want)))
          << i << ", " << j;
    }
}

// Terms left out because the caller knows them zero change nothing, bit
// for bit: how the attention kernel skips masked keys.
TEST(SmallGemm, SkippedZeroTermsLeaveTheSameBits) {
  const int64_t m = 16, n = 32, k = 48;
  std::mt19937 rng(11);
  Stored a(m, k, false, rng);
  const Stored b(k, n, false, rng);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t s = 0; s < k; ++s)
      if (s < 8 || s >= 30)
        a.data[size_t(i * a.view.row + s)] = 0.0f;
  const Span terms[] = {{8, 30}, {8, 30}};
  std::vector<float> all(size_t(m * n)), bounded(size_t(m * n));
  smallGemm(m, n, k, 1.0f, a.view, b.view, all.data(), n, false);
  smallGemm(m, n, k, 1.0f, a.view, b.view, bounded.data(), n, false,
            TileBounds{nullptr, terms});
  EXPECT_EQ(all, bounded);
}

// A head-wide C (64 columns, B by rows, no column bounds) is computed in
// tiles of 6 rows, which straddle the bounds' tiles of 8: rows 6-7 and 8-11
// share a tile and sum the terms of both. Those beyond a row's own are
// zero, so the bits are those of the whole sum, with or without bounds,
// accumulated or not.
TEST(SmallGemm, WideTilesAcrossBoundsLeaveTheSameBits) {
  const int64_t m = 20, n = 128, k = 40;
  std::mt19937 rng(13);
  Stored a(m, k, true, rng);
  const Stored b(k, n, false, rng);
  const Span terms[] = {{0, 10}, {5, 30}, {12, 40}};
  for (int64_t i = 0; i < m; ++i) {
    const Span own = terms[i / lmc::rt::kSmallGemmTileRows];
    for (int64_t s = 0; s < k; ++s)
      if (s < own.begin || s >= own.end)
        a.data[size_t(i * a.view.row + s * a.view.col)] = 0.0f;
  }
  for (bool accumulate : {false, true}) {
    std::vector<float> all = random(size_t(m * n), rng), bounded = all;
    smallGemm(m, n, k, 0.5f, a.view, b.view, all.data(), n, accumulate);
    smallGemm(m, n, k, 0.5f, a.view, b.view, bounded.data(), n, accumulate,
              TileBounds{nullptr, terms});
    EXPECT_EQ(all, bounded) << "accumulate " << accumulate;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = product(a, b, i, j, 0, k, 0.5f);
        if (!accumulate)
          EXPECT_NEAR(all[size_t(i * n + j)], want,
                      1e-5 * (1 + std::fabs(want)))
              << i << ", " << j;
      }
  }
}

TEST(SmallGemm, TransposeMatrix) {
  // Whole 16 x 16 blocks and the rows and columns they leave.
  const int64_t shapes[][2] = {{32, 48}, {37, 50}, {5, 3}, {16, 1}};
  for (auto [rows, cols] : shapes) {
    std::mt19937 rng(unsigned(rows * 100 + cols));
    const int64_t ldFrom = cols + 2, ldTo = rows + 4;
    std::vector<float> from = random(size_t(rows * ldFrom), rng);
    std::vector<float> to(size_t(cols * ldTo), -7.0f);
    lmc::rt::transposeMatrix(from.data(), ldFrom, rows, cols, to.data(), ldTo);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < ldTo; ++i)
        EXPECT_EQ(to[size_t(j * ldTo + i)],
                  i < rows ? from[size_t(i * ldFrom + j)] : -7.0f)
            << rows << "x" << cols << " at (" << j << ", " << i << ")";
  }
}

} // namespace
