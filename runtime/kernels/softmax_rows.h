//===- softmax_rows.h - Attention's passes over a row ----------*- C++ -*-===//
//
// Per row of a block's scores (kernels/attention.cpp): its maximum, its
// exponentials and their sum, and the softmax's gradient. The rows are
// short (a causal row of 128 keys averages 64), thousands per call, so the
// fixed cost of a row counts as much as its vector loop: on AVX-512 CPUs
// each pass is one 16-float vector per step, its tail masked and its lanes
// reduced in registers; elsewhere (or with LMC_ROW_LOOPS=generic, which
// the unit tests also run) plain loops the compiler vectorizes
// (row_loops.h). Either way a row's sums run over kRowLanes lanes added
// pairwise: a row's results depend on the row alone, not on the thread
// that computes it.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_SOFTMAX_ROWS_H
#define LMC_RUNTIME_KERNELS_SOFTMAX_ROWS_H

#include "row_loops.h"

#include <cstdint>

namespace lmc::rt {

/// Masked entries of a row of scores (masked[j] != 0) to -inf; returns the
/// row's maximum (NaN if a score is NaN).
float maskAndMax(float *row, const uint8_t *masked, int64_t n);

/// The maximum of n scores (NaN if one is NaN).
float rowMax(const float *row, int64_t n);

/// row[j] = e^(row[j] - max) for j < n; returns their sum. `max` is at
/// least every row[j] (or +inf: every exponential 0).
float expAndSum(float *row, int64_t n, float max);

/// The dot product of two rows of n floats.
float rowDot(const float *a, const float *b, int64_t n);

/// The softmax's gradient on one row of exponentials e (probabilities
/// e / sum): g = e (g - dot) factor, factor = scale / sum.
void softmaxGrad(float *g, const float *e, int64_t n, float dot, float factor);

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNELS_SOFTMAX_ROWS_H
