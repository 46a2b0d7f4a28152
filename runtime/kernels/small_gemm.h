//===- small_gemm.h - Register-blocked small products ----------*- C++ -*-===//
//
// The attention kernel's products (kernels/attention.cpp): a block of 64
// query rows against a head of 64 columns and up to a few hundred keys,
// thousands of them per step. An 8 x 32 tile of C in 16 vector registers
// per step of the sum, or, where C is a head wide (64 columns, B's rows
// contiguous, no column bounds), a 6 x 64 tile in 24; the operands read
// where they lie through their strides, B packed a panel at a time only
// when its rows are not contiguous. Alone it runs these shapes about as
// fast as oneDNN's sgemm (docs/perf.md, "Measurements behind the kernels'
// choices"); what a library call cannot do is
// skip, tile by tile, the columns and terms a causal mask leaves zero
// (TileBounds), about a fifth of the attention's products at 128 to 256
// tokens. Its own header so that it is tested as such
// (test/unit/runtime/kernels/small_gemm_test.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_SMALL_GEMM_H
#define LMC_RUNTIME_KERNELS_SMALL_GEMM_H

#include <cstdint>

namespace lmc::rt {

/// A matrix read through strides: element (i, j) at p[i * row + j * col].
/// One of the two strides is 1 (a row-major matrix or a transposed one).
struct StridedMatrix {
  const float *p;
  int64_t row, col;

  /// The matrix from column j on.
  StridedMatrix atColumn(int64_t j) const { return {p + j * col, row, col}; }
};

/// C's rows are computed in tiles of this many.
constexpr int64_t kSmallGemmTileRows = 8;

/// A half-open range of indices.
struct Span {
  int64_t begin, end;
};

/// What each tile of kSmallGemmTileRows rows of C needs, when the caller
/// knows A or B to be zero in places (attention's masked probabilities):
/// `columns[t]`, the columns of C tile t must hold (the others may be left
/// unwritten, in whole panels of 32 or the upper half of one), and
/// `terms[t]`, the terms of the sum that may be non-zero (the others are
/// zero, and left out or added: either leaves the sum's bits, as it starts
/// at +0). Either may be null (all columns, all terms).
struct TileBounds {
  const Span *columns = nullptr;
  const Span *terms = nullptr;
};

/// C (m x n, row-major, rows ldc apart) = alpha * A B, or C + alpha * A B
/// when `accumulate` (C is not read otherwise); A is m x k, B k x n. Each
/// element is its k products summed in order, one fused multiply-add at a
/// time, then scaled by alpha: the same bits on every thread, whatever the
/// caller's shape around it. B is read in place when its rows are
/// contiguous (col 1), else packed a panel at a time. On a CPU without
/// AVX-512 (or with LMC_SMALL_GEMM=library) the same product runs through
/// the library (sgemm.h), whose summation order is its own, over all
/// columns and terms.
void smallGemm(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a,
               StridedMatrix b, float *c, int64_t ldc, bool accumulate,
               const TileBounds &bounds = {});

/// to[j * ldTo + i] = from[i * ldFrom + j] for a rows x cols `from`: the
/// operand a product reads by columns laid out by rows, once for all the
/// products that read it. 16 x 16 blocks transposed in registers on
/// AVX-512 CPUs.
void transposeMatrix(const float *from, int64_t ldFrom, int64_t rows,
                     int64_t cols, float *to, int64_t ldTo);

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNELS_SMALL_GEMM_H
