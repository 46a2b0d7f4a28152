//===- softmax_rows.cpp - The attention kernel's passes over a row --------===//

#include "softmax_rows.h"

#include "avx512.h"

#include <algorithm>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace lmc::rt {
namespace {

constexpr int64_t kLanes = kRowLanes;

//===----------------------------------------------------------------------===//
// The plain loops (CPUs without AVX-512, LMC_ROW_LOOPS=generic).
//===----------------------------------------------------------------------===//

/// e^x for x <= 0 (a score minus its row's maximum): Cephes' expf
/// polynomial after x = n ln 2 + r, about 1 ulp; branch-free, so that the
/// loops calling it vectorize. Below -104 (and for -inf) 0; NaN stays NaN.
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
  return x > -104.0f ? value : (x != x ? x : 0.0f);
}

/// The lanes' sum, added pairwise (the upper half onto the lower, four
/// times): a fixed order, in a few vector steps instead of kLanes
/// dependent additions (rows here are short).
inline float sumLanes(float *lane) {
  for (int64_t width = kLanes / 2; width >= 1; width /= 2)
    for (int64_t l = 0; l < width; ++l)
      lane[l] += lane[l + width];
  return lane[0];
}

/// The lanes' maximum, in the same steps.
inline float maxLanes(float *lane) {
  for (int64_t width = kLanes / 2; width >= 1; width /= 2)
    for (int64_t l = 0; l < width; ++l)
      lane[l] = lane[l + width] > lane[l] ? lane[l + width] : lane[l];
  return lane[0];
}

/// Masked entries of a row of scores to -inf; returns the row's maximum
/// (NaN if a score is NaN).
LMC_ROW_LOOP float maskAndMaxGeneric(float *__restrict row,
                                     const uint8_t *__restrict masked,
                                     int64_t n) {
  const float negInf = -std::numeric_limits<float>::infinity();
  float lane[kLanes];
  std::fill(lane, lane + kLanes, negInf);
  bool nan = false;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      float x = masked[j + l] ? negInf : row[j + l];
      row[j + l] = x;
      nan |= x != x;
      lane[l] = x > lane[l] ? x : lane[l];
    }
  float max = negInf;
  for (; j < n; ++j) {
    float x = masked[j] ? negInf : row[j];
    row[j] = x;
    nan |= x != x;
    max = x > max ? x : max;
  }
  const float lanes = maxLanes(lane);
  max = lanes > max ? lanes : max;
  return nan ? std::numeric_limits<float>::quiet_NaN() : max;
}

/// The maximum of n scores (NaN if one is NaN).
LMC_ROW_LOOP float rowMaxGeneric(const float *__restrict row, int64_t n) {
  const float negInf = -std::numeric_limits<float>::infinity();
  float lane[kLanes];
  int32_t nan[kLanes] = {};
  std::fill(lane, lane + kLanes, negInf);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      float x = row[j + l];
      nan[l] |= x != x;
      lane[l] = x > lane[l] ? x : lane[l];
    }
  float max = negInf;
  bool anyNan = false;
  for (; j < n; ++j) {
    anyNan |= row[j] != row[j];
    max = row[j] > max ? row[j] : max;
  }
  for (int64_t l = 0; l < kLanes; ++l)
    anyNan |= nan[l] != 0;
  const float lanes = maxLanes(lane);
  max = lanes > max ? lanes : max;
  return anyNan ? std::numeric_limits<float>::quiet_NaN() : max;
}

/// row[j] = e^(row[j] - max); returns their sum.
LMC_ROW_LOOP float expAndSumGeneric(float *row, int64_t n, float max) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      float e = expNonPositive(row[j + l] - max);
      row[j + l] = e;
      lane[l] += e;
    }
  float sum = 0;
  for (; j < n; ++j) {
    float e = expNonPositive(row[j] - max);
    row[j] = e;
    sum += e;
  }
  return sumLanes(lane) + sum;
}

/// The dot product of two rows, lane by lane.
LMC_ROW_LOOP float rowDotGeneric(const float *__restrict a,
                                 const float *__restrict b, int64_t n) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lane[l] += a[j + l] * b[j + l];
  float sum = 0;
  for (; j < n; ++j)
    sum += a[j] * b[j];
  return sumLanes(lane) + sum;
}

/// The softmax's gradient on one row of exponentials e (probabilities
/// e / sum): g = e (g - dot) factor, factor = scale / sum.
LMC_ROW_LOOP void softmaxGradGeneric(float *__restrict g,
                                     const float *__restrict e, int64_t n,
                                     float dot, float factor) {
  for (int64_t j = 0; j < n; ++j)
    g[j] = e[j] * (g[j] - dot) * factor;
}

#if defined(__x86_64__)
//===----------------------------------------------------------------------===//
// AVX-512: one 16-float vector per step (kLanes lanes), the tail masked.
//===----------------------------------------------------------------------===//

static_assert(kLanes == 16, "one AVX-512 vector per step");

/// The lanes' sum, added pairwise as sumLanes() adds them (upper half onto
/// the lower, four times).
LMC_AVX512 inline float sumLanes(__m512 v) {
  const __m256 eight = _mm256_add_ps(
      _mm512_castps512_ps256(v),
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight),
                                 _mm256_extractf128_ps(eight, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_shuffle_ps(two, two, 1)));
}

/// Lanes [0, n - j) of the step at j (all 16 when n - j >= 16).
inline __mmask16 lanesFrom(int64_t j, int64_t n) {
  return n - j >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1);
}

/// expNonPositive() on 16 lanes: the same steps, the polynomial's
/// multiply-adds fused.
LMC_AVX512 inline __m512 expNonPositive(__m512 x) {
  const __m512 lowest = _mm512_set1_ps(-104.0f);
  const __mmask16 inRange = _mm512_cmp_ps_mask(x, lowest, _CMP_GT_OQ);
  const __m512 clamped = _mm512_mask_blend_ps(inRange, lowest, x);
  const __m512 shifter = _mm512_set1_ps(12582912.0f);
  const __m512 t =
      _mm512_fmadd_ps(clamped, _mm512_set1_ps(1.44269504088896341f), shifter);
  const __m512 n = _mm512_sub_ps(t, shifter);
  const __m512i e =
      _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(shifter));
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), clamped);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                  1.6666665459e-1f, 5.0000001201e-1f})
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
  p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r),
                    _mm512_set1_ps(1.0f));
  // 2^n in two normal halves, so that a subnormal result is rounded once.
  const __m512i half = _mm512_srai_epi32(e, 1), bias = _mm512_set1_epi32(127);
  const __m512 low =
      _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(half, bias), 23));
  const __m512 high = _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_sub_epi32(e, half), bias), 23));
  const __m512 value = _mm512_mul_ps(_mm512_mul_ps(p, low), high);
  // Below -104 and -inf: 0; NaN stays NaN.
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(inRange, _mm512_maskz_mov_ps(nan, x), value);
}

LMC_AVX512 float rowMaxAvx512(const float *row, int64_t n) {
  __m512 max = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __mmask16 nan = 0;
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 lanes = lanesFrom(j, n);
    const __m512 x = _mm512_mask_loadu_ps(max, lanes, row + j);
    nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    max = _mm512_max_ps(max, x);
  }
  return nan ? std::numeric_limits<float>::quiet_NaN()
             : _mm512_reduce_max_ps(max);
}

LMC_AVX512 float expAndSumAvx512(float *row, int64_t n, float max) {
  const __m512 shift = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 lanes = lanesFrom(j, n);
    const __m512 e = expNonPositive(
        _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, row + j), shift));
    _mm512_mask_storeu_ps(row + j, lanes, e);
    sum = _mm512_mask_add_ps(sum, lanes, sum, e);
  }
  return sumLanes(sum);
}

LMC_AVX512 float rowDotAvx512(const float *a, const float *b, int64_t n) {
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 lanes = lanesFrom(j, n);
    sum = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(lanes, a + j),
                          _mm512_maskz_loadu_ps(lanes, b + j), sum);
  }
  return sumLanes(sum);
}

LMC_AVX512 void softmaxGradAvx512(float *g, const float *e, int64_t n,
                                  float dot, float factor) {
  const __m512 d = _mm512_set1_ps(dot), f = _mm512_set1_ps(factor);
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 lanes = lanesFrom(j, n);
    const __m512 x = _mm512_mul_ps(
        _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, e + j),
                      _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, g + j), d)),
        f);
    _mm512_mask_storeu_ps(g + j, lanes, x);
  }
}

/// Whether the AVX-512 passes run: on CPUs with AVX-512, unless
/// LMC_ROW_LOOPS=generic asks for the loops other CPUs run (so that they
/// are tested here too).
bool onAvx512() {
  static const bool use = runsAvx512("LMC_ROW_LOOPS", "generic");
  return use;
}
#endif

} // namespace

float maskAndMax(float *row, const uint8_t *masked, int64_t n) {
  return maskAndMaxGeneric(row, masked, n);
}

float rowMax(const float *row, int64_t n) {
#if defined(__x86_64__)
  if (onAvx512())
    return rowMaxAvx512(row, n);
#endif
  return rowMaxGeneric(row, n);
}

float expAndSum(float *row, int64_t n, float max) {
#if defined(__x86_64__)
  if (onAvx512())
    return expAndSumAvx512(row, n, max);
#endif
  return expAndSumGeneric(row, n, max);
}

float rowDot(const float *a, const float *b, int64_t n) {
#if defined(__x86_64__)
  if (onAvx512())
    return rowDotAvx512(a, b, n);
#endif
  return rowDotGeneric(a, b, n);
}

void softmaxGrad(float *g, const float *e, int64_t n, float dot, float factor) {
#if defined(__x86_64__)
  if (onAvx512())
    return softmaxGradAvx512(g, e, n, dot, factor);
#endif
  softmaxGradGeneric(g, e, n, dot, factor);
}

} // namespace lmc::rt
