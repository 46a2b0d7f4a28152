//===- layer_norm.cpp - Layer normalization, one pass per row ------------===//
//
// lmc.layer_norm and its gradient over the rows of a [rows, C] matrix. The
// decomposition an ONNX LayerNormalization is imported as takes six loop
// nests forward and seven backward, each a pass over the whole tensor (and
// an OpenMP region of its own); here a row is read once and finished while
// it is in the L1 cache: forward its mean, variance and output, backward
// its two sums and its dx (plus another cotangent of x, a residual
// stream's, when given), while the row's share of the scale and bias
// gradients is added to its chunk's column sums.
//
// The arithmetic is the decomposition's, operation for operation: mean =
// sum(x) * (1 / C), centered x - mean, var = sum(c * c) * (1 / C), rstd =
// 1 / sqrt(var + eps), y = c * rstd * scale + bias; only the sums run in
// another order (kRowLanes lanes). The gradient is the closed form:
// g = dy * scale, xhat = c * rstd, dx = (g - mean(g) - xhat * mean(g xhat))
// * rstd, dscale = sum over rows of dy * xhat, dbias = sum of dy.
//
// Rows are independent; the scale and bias gradients are summed over fixed
// chunks of kChunkRows rows, then the chunks in order, so that results do
// not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/kernels.h"

#include "row_loops.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

using lmc::rt::kRowLanes;

/// Rows per chunk of the scale and bias gradients' partial sums.
constexpr int64_t kChunkRows = 32;

/// The sum of row[0, n) over kRowLanes lanes.
LMC_ROW_LOOP float rowSum(const float *__restrict row, int64_t n) {
  float lane[kRowLanes] = {};
  int64_t j = 0;
  for (; j + kRowLanes <= n; j += kRowLanes)
    for (int64_t l = 0; l < kRowLanes; ++l)
      lane[l] += row[j + l];
  float sum = 0;
  for (; j < n; ++j)
    sum += row[j];
  for (float s : lane)
    sum += s;
  return sum;
}

/// Writes the centered row x - mean to `y` (the output's place) and
/// returns the sum of its squares.
LMC_ROW_LOOP float centerRow(const float *__restrict x, float *__restrict y,
                             int64_t n, float mean) {
  float lane[kRowLanes] = {};
  int64_t j = 0;
  for (; j + kRowLanes <= n; j += kRowLanes)
    for (int64_t l = 0; l < kRowLanes; ++l) {
      float c = x[j + l] - mean;
      y[j + l] = c;
      lane[l] += c * c;
    }
  float sum = 0;
  for (; j < n; ++j) {
    float c = x[j] - mean;
    y[j] = c;
    sum += c * c;
  }
  for (float s : lane)
    sum += s;
  return sum;
}

/// y = c * rstd * scale + bias over a centered row, in place.
LMC_ROW_LOOP void normalizeRow(float *__restrict y,
                               const float *__restrict scale,
                               const float *__restrict bias, int64_t n,
                               float rstd) {
  for (int64_t j = 0; j < n; ++j)
    y[j] = y[j] * rstd * scale[j] + bias[j];
}

/// The gradient row pass over one row: the chunk's column sums gain dy *
/// xhat (dscale) and dy (dbias); returns sum(g) and sum(g * xhat), g = dy
/// * scale.
struct RowSums {
  float g, gXhat;
};
LMC_ROW_LOOP RowSums gradientSums(const float *__restrict x,
                                  const float *__restrict dy,
                                  const float *__restrict scale,
                                  float *__restrict dscale,
                                  float *__restrict dbias, int64_t n,
                                  float mean, float rstd) {
  float gLane[kRowLanes] = {}, gXhatLane[kRowLanes] = {};
  auto at = [&](int64_t j, float &gSum, float &gXhatSum) {
    float xhat = (x[j] - mean) * rstd, d = dy[j], g = d * scale[j];
    dscale[j] += d * xhat;
    dbias[j] += d;
    gSum += g;
    gXhatSum += g * xhat;
  };
  int64_t j = 0;
  for (; j + kRowLanes <= n; j += kRowLanes)
    for (int64_t l = 0; l < kRowLanes; ++l)
      at(j + l, gLane[l], gXhatLane[l]);
  RowSums sums{0, 0};
  for (; j < n; ++j)
    at(j, sums.g, sums.gXhat);
  for (int64_t l = 0; l < kRowLanes; ++l) {
    sums.g += gLane[l];
    sums.gXhat += gXhatLane[l];
  }
  return sums;
}

/// dx = (g - meanG - xhat * meanGXhat) * rstd over one row, plus
/// `accumulate` unless null.
LMC_ROW_LOOP void inputGradientRow(const float *__restrict x,
                                   const float *__restrict dy,
                                   const float *__restrict scale,
                                   const float *__restrict accumulate,
                                   float *__restrict dx, int64_t n,
                                   float mean, float rstd, float meanG,
                                   float meanGXhat) {
  for (int64_t j = 0; j < n; ++j) {
    float xhat = (x[j] - mean) * rstd, g = dy[j] * scale[j];
    dx[j] = (g - meanG - xhat * meanGXhat) * rstd;
  }
  if (accumulate)
    for (int64_t j = 0; j < n; ++j)
      dx[j] = accumulate[j] + dx[j];
}

/// to[j] += from[j].
LMC_ROW_LOOP void addRow(float *__restrict to, const float *__restrict from,
                         int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    to[j] += from[j];
}

} // namespace

extern "C" void lmc_rt_layer_norm_f32(const float *x, const float *scale,
                                      const float *bias, float *y,
                                      float *stats, int64_t rows, int64_t C,
                                      float epsilon) {
  const float inverseCount = float(1.0 / double(C));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * C;
    float *yr = y + r * C;
    float mean = rowSum(xr, C) * inverseCount;
    float variance = centerRow(xr, yr, C, mean) * inverseCount;
    float rstd = 1.0f / std::sqrt(variance + epsilon);
    normalizeRow(yr, scale, bias, C, rstd);
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}

extern "C" void lmc_rt_layer_norm_grad_f32(const float *x, const float *scale,
                                           const float *stats,
                                           const float *dy,
                                           const float *accumulate, float *dx,
                                           float *dscale, float *dbias,
                                           int64_t rows, int64_t C) {
  const float inverseCount = float(1.0 / double(C));
  const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  // Per chunk: its dscale then its dbias column sums.
  std::vector<float> partial(size_t(chunks * 2 * C), 0.0f);
#pragma omp parallel for schedule(static)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    float *chunkScale = partial.data() + chunk * 2 * C,
          *chunkBias = chunkScale + C;
    const int64_t end = std::min(rows, (chunk + 1) * kChunkRows);
    for (int64_t r = chunk * kChunkRows; r < end; ++r) {
      const float mean = stats[2 * r], rstd = stats[2 * r + 1];
      const RowSums sums = gradientSums(x + r * C, dy + r * C, scale,
                                        chunkScale, chunkBias, C, mean, rstd);
      inputGradientRow(x + r * C, dy + r * C, scale,
                       accumulate ? accumulate + r * C : nullptr, dx + r * C,
                       C, mean, rstd, sums.g * inverseCount,
                       sums.gXhat * inverseCount);
    }
  }
  std::fill(dscale, dscale + C, 0.0f);
  std::fill(dbias, dbias + C, 0.0f);
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    addRow(dscale, partial.data() + chunk * 2 * C, C);
    addRow(dbias, partial.data() + chunk * 2 * C + C, C);
  }
}
