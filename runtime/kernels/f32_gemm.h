//===- f32_gemm.h - Which oneDNN path runs an f32 product -------*- C++ -*-===//
//
// oneDNN offers two f32 GEMMs: dnnl_sgemm (its BLAS-like driver, sgemm.h)
// and the matmul primitive, which on AVX-512 CPUs runs its brgemm kernels
// (f32_gemm.cpp). Neither wins every shape (bench/gemm_paths.sh measures
// both per shape; the figures the rule rests on are in docs/perf.md,
// "Measurements behind the kernels' choices"): the primitive leads on a
// layer's forward C = A Bt with a long sum, sgemm on the weights' and the
// inputs' gradients inside the step.
//
// The rule below picks the primitive where it led in the step too: A Bt
// with K at least three quarters of N. It reads the shape alone, so every
// part is the same call on any thread count and results keep their bits
// (each path sums in an order fixed by its shape).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_F32_GEMM_H
#define LMC_RUNTIME_KERNELS_F32_GEMM_H

#include <cblas.h>

#include <cstdint>

namespace lmc::rt {

/// Whether the matmul primitive runs this product (row-major C = op(A)
/// op(B), M x N x K), by the measured rule above.
inline bool prefersMatmulPrimitive(CBLAS_TRANSPOSE transA,
                                   CBLAS_TRANSPOSE transB, int64_t N,
                                   int64_t K) {
  return transA == CblasNoTrans && transB == CblasTrans && 4 * K >= 3 * N;
}

/// The f32 product on the path prefersMatmulPrimitive() picks, behind
/// cblas_sgemm's signature (row-major only); a part of a wider C of more
/// than 8 MiB stays on sgemm (the primitive would compute it in a dense
/// block of its own). Called inside an OpenMP
/// region, or with one OpenMP thread, it runs on the calling thread alone.
void f32Gemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA, CBLAS_TRANSPOSE transB,
             blasint M, blasint N, blasint K, float alpha, const float *A,
             blasint lda, const float *B, blasint ldb, float beta, float *C,
             blasint ldc);

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNELS_F32_GEMM_H
