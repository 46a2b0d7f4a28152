//===- attention.cpp - Masked attention in blocks of queries -------------===//
//
// softmax(mask(scale * Q Kt)) V and its gradient without the [T, S] score
// and probability matrices of every (batch, head) pair: one block of query
// rows at a time, its scores in a scratch buffer, and only over the keys
// the block's mask leaves some row to attend to. A causal mask (GPT)
// leaves the lower triangle: about half the key blocks, half the products,
// are skipped. The arithmetic is that of the unfused graph, row by row
// (max, exp of the differences, their sum, quotients), so the
// probabilities the backward recomputes from the saved row maxima and sums
// are bitwise those of the forward.
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

/// Query rows per block: the scores of a block (kBlock x S floats) stay in
/// the L2 cache for S up to a few thousand keys.
constexpr int64_t kBlock = 64;

#if defined(__x86_64__) && !defined(__clang__)
// The row loops below are the kernel's own arithmetic: compiled for AVX-512
// and AVX2 too, the best chosen at load time. Each lane does the same
// operations in the same order on every path, so results do not depend
// on which one runs.
#define LMC_ROW_LOOP __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LMC_ROW_LOOP
#endif

/// e^x for x <= 0 (a score minus its row's maximum): Cephes' expf
/// polynomial after x = n ln 2 + r, about 1 ulp; branch-free, so that the
/// loops calling it vectorize. Below -104 (and for -inf) 0; NaN gives 0
/// too, and the row's sum of 0 makes its probabilities NaN.
inline float expNonPositive(float x) {
  float clamped = x > -104.0f ? x : -104.0f;
  // n = round(x / ln 2) by the 1.5 * 2^23 trick: n sits in the low bits.
  const float shifter = 12582912.0f;
  float t = clamped * 1.44269504088896341f + shifter;
  float n = t - shifter;
  int32_t tBits, shifterBits;
  std::memcpy(&tBits, &t, sizeof t);
  std::memcpy(&shifterBits, &shifter, sizeof shifter);
  int32_t e = tBits - shifterBits; // n, in [-150, 0]
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n in two halves, each a normal float, so that a subnormal result is
  // rounded once.
  int32_t half = e / 2;
  int32_t lowBits = (half + 127) << 23, highBits = (e - half + 127) << 23;
  float low, high;
  std::memcpy(&low, &lowBits, sizeof low);
  std::memcpy(&high, &highBits, sizeof high);
  float value = p * low * high;
  return x > -104.0f ? value : 0.0f;
}

/// Lanes of the row reductions: fixed, so that the sums' order is the same
/// whatever the vector width.
constexpr int64_t kLanes = 16;

LMC_ROW_LOOP float rowMax(const float *row, int64_t n) {
  float lane[kLanes];
  std::fill(lane, lane + kLanes, -std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lane[l] = row[j + l] > lane[l] || row[j + l] != row[j + l] ? row[j + l]
                                                                 : lane[l];
  float max = -std::numeric_limits<float>::infinity();
  for (; j < n; ++j)
    max = row[j] > max || row[j] != row[j] ? row[j] : max;
  for (float m : lane)
    max = m > max || m != m ? m : max;
  return max;
}

LMC_ROW_LOOP float rowSum(const float *row, int64_t n) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lane[l] += row[j + l];
  float sum = 0;
  for (; j < n; ++j)
    sum += row[j];
  for (float s : lane)
    sum += s;
  return sum;
}

/// row[j] = e^(row[j] - max).
LMC_ROW_LOOP void expShifted(float *row, int64_t n, float max) {
  for (int64_t j = 0; j < n; ++j)
    row[j] = expNonPositive(row[j] - max);
}

LMC_ROW_LOOP void divide(float *row, int64_t n, float by) {
  for (int64_t j = 0; j < n; ++j)
    row[j] = row[j] / by;
}

/// The softmax's gradient on one row: g = p (g - dot) scale.
LMC_ROW_LOOP void softmaxGrad(float *g, const float *p, int64_t n, float dot,
                              float scale) {
  for (int64_t j = 0; j < n; ++j)
    g[j] = p[j] * (g[j] - dot) * scale;
}

/// Scale, then mask (-inf where masked): the unfused graph's order.
LMC_ROW_LOOP void scaleAndMask(float *row, const uint8_t *masked, int64_t n,
                               float scale) {
  for (int64_t j = 0; j < n; ++j) {
    float scaled = row[j] * scale;
    row[j] = masked[j] ? -std::numeric_limits<float>::infinity() : scaled;
  }
}

/// The keys [first, last) a block of query rows attends to: the columns
/// where some row's mask is 0. first == last when every key is masked.
void keyRange(const uint8_t *mask, int64_t rows, int64_t S, int64_t &first,
              int64_t &last) {
  first = S;
  last = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const uint8_t *row = mask + i * S;
    int64_t j = 0;
    while (j < S && row[j])
      ++j;
    if (j == S)
      continue;
    first = std::min(first, j);
    int64_t k = S;
    while (row[k - 1])
      --k;
    last = std::max(last, k);
  }
  if (first >= last)
    first = last = 0;
}

/// Scores of rows [i0, i0 + rows) over keys [first, last): scale * Q Kt,
/// masked entries -inf (the unfused graph's order: product, scale, mask).
void scores(const float *q, const float *kt, const uint8_t *mask, float *s,
            int64_t i0, int64_t rows, int64_t S, int64_t D, int64_t first,
            int64_t width, float scale) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(rows),
              blasint(width), blasint(D), 1.0f, q + i0 * D, blasint(D),
              kt + first, blasint(S), 0.0f, s, blasint(width));
  for (int64_t i = 0; i < rows; ++i)
    scaleAndMask(s + i * width, mask + (i0 + i) * S + first, width, scale);
}

/// A row's probabilities from its scores, in place, and its statistics:
/// the maximum and the sum of exponentials (the unfused softmax's
/// exp(s - max) / sum). A row with every key masked gets zeros (its
/// output is NaN, set by the caller).
void softmaxRow(float *row, int64_t width, float *stats) {
  float max = rowMax(row, width);
  stats[0] = max;
  if (max == -std::numeric_limits<float>::infinity()) {
    stats[1] = 0;
    std::fill(row, row + width, 0.0f);
    return;
  }
  expShifted(row, width, max);
  stats[1] = rowSum(row, width);
  divide(row, width, stats[1]);
}

/// The same probabilities again from the saved statistics.
void probabilitiesFrom(float *row, int64_t width, const float *stats) {
  if (stats[0] == -std::numeric_limits<float>::infinity()) {
    std::fill(row, row + width, 0.0f);
    return;
  }
  expShifted(row, width, stats[0]);
  divide(row, width, stats[1]);
}

struct Shape {
  int64_t T, S, D, Dv;
  float scale;
};

void forwardPair(const float *q, const float *kt, const float *v,
                 const uint8_t *mask, float *out, float *stats,
                 const Shape &shape, std::vector<float> &scratch) {
  const auto [T, S, D, Dv, scale] = shape;
  scratch.resize(size_t(kBlock * S));
  for (int64_t i0 = 0; i0 < T; i0 += kBlock) {
    int64_t rows = std::min(kBlock, T - i0), first, last;
    keyRange(mask + i0 * S, rows, S, first, last);
    int64_t width = last - first;
    float *s = scratch.data();
    if (width > 0)
      scores(q, kt, mask, s, i0, rows, S, D, first, width, scale);
    for (int64_t i = 0; i < rows; ++i)
      softmaxRow(s + i * width, width, stats + 2 * (i0 + i));
    if (width > 0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(rows),
                  blasint(Dv), blasint(width), 1.0f, s, blasint(width),
                  v + first * Dv, blasint(Dv), 0.0f, out + i0 * Dv,
                  blasint(Dv));
    // A row with every key masked: NaN, as the unfused softmax gives it
    // (-inf - -inf).
    for (int64_t i = 0; i < rows; ++i)
      if (stats[2 * (i0 + i)] == -std::numeric_limits<float>::infinity())
        std::fill(out + (i0 + i) * Dv, out + (i0 + i + 1) * Dv,
                  std::numeric_limits<float>::quiet_NaN());
  }
}

void backwardPair(const float *q, const float *kt, const float *v,
                  const uint8_t *mask, const float *out, const float *stats,
                  const float *dout, float *dq, float *dkt, float *dv,
                  const Shape &shape, std::vector<float> &scratch) {
  const auto [T, S, D, Dv, scale] = shape;
  scratch.resize(size_t(2 * kBlock * S + T));
  float *p = scratch.data(), *dp = p + kBlock * S, *rowDot = dp + kBlock * S;
  std::fill(dkt, dkt + D * S, 0.0f);
  std::fill(dv, dv + S * Dv, 0.0f);
  // dot(dO_i, O_i): the softmax gradient's per-row term.
  for (int64_t i = 0; i < T; ++i) {
    float dot = 0;
    for (int64_t c = 0; c < Dv; ++c)
      dot += dout[i * Dv + c] * out[i * Dv + c];
    rowDot[i] = dot;
  }
  for (int64_t i0 = 0; i0 < T; i0 += kBlock) {
    int64_t rows = std::min(kBlock, T - i0), first, last;
    keyRange(mask + i0 * S, rows, S, first, last);
    int64_t width = last - first;
    if (width == 0) {
      std::fill(dq + i0 * D, dq + (i0 + rows) * D, 0.0f);
      continue;
    }
    scores(q, kt, mask, p, i0, rows, S, D, first, width, scale);
    for (int64_t i = 0; i < rows; ++i)
      probabilitiesFrom(p + i * width, width, stats + 2 * (i0 + i));
    // dV[first..last) += P^T dO
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(width),
                blasint(Dv), blasint(rows), 1.0f, p, blasint(width),
                dout + i0 * Dv, blasint(Dv), 1.0f, dv + first * Dv,
                blasint(Dv));
    // dP = dO V^T
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(rows),
                blasint(width), blasint(Dv), 1.0f, dout + i0 * Dv,
                blasint(Dv), v + first * Dv, blasint(Dv), 0.0f, dp,
                blasint(width));
    // dS = P (dP - dot(dO, O)) scale (the mask's zeros stay zero).
    for (int64_t i = 0; i < rows; ++i)
      softmaxGrad(dp + i * width, p + i * width, width, rowDot[i0 + i],
                  scale);
    // dQ = dS Kt^T, dKt[:, first..last) += Q^T dS
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(rows),
                blasint(D), blasint(width), 1.0f, dp, blasint(width),
                kt + first, blasint(S), 0.0f, dq + i0 * D, blasint(D));
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(D),
                blasint(width), blasint(rows), 1.0f, q + i0 * D, blasint(D),
                dp, blasint(width), 1.0f, dkt + first, blasint(S));
  }
}

} // namespace

extern "C" void lmc_rt_attention_f32(const float *q, const float *kt,
                                     const float *v, const uint8_t *mask,
                                     float *out, float *stats, int64_t pairs,
                                     int64_t T, int64_t S, int64_t D,
                                     int64_t Dv, float scale) {
  const Shape shape{T, S, D, Dv, scale};
  // Pairs are independent and each is computed the same way whichever
  // thread takes it: results do not depend on the thread count.
#pragma omp parallel
  {
    std::vector<float> scratch;
#pragma omp for schedule(static)
    for (int64_t b = 0; b < pairs; ++b)
      forwardPair(q + b * T * D, kt + b * D * S, v + b * S * Dv, mask,
                  out + b * T * Dv, stats + b * T * 2, shape, scratch);
  }
}

extern "C" void lmc_rt_attention_grad_f32(
    const float *q, const float *kt, const float *v, const uint8_t *mask,
    const float *out, const float *stats, const float *dout, float *dq,
    float *dkt, float *dv, int64_t pairs, int64_t T, int64_t S, int64_t D,
    int64_t Dv, float scale) {
  const Shape shape{T, S, D, Dv, scale};
#pragma omp parallel
  {
    std::vector<float> scratch;
#pragma omp for schedule(static)
    for (int64_t b = 0; b < pairs; ++b)
      backwardPair(q + b * T * D, kt + b * D * S, v + b * S * Dv, mask,
                   out + b * T * Dv, stats + b * T * 2, dout + b * T * Dv,
                   dq + b * T * D, dkt + b * D * S, dv + b * S * Dv, shape,
                   scratch);
  }
}
