//===- f32_gemm.h - Which oneDNN path runs an f32 product -------*- C++ -*-===//
//
// oneDNN offers two f32 GEMMs: dnnl_sgemm (its BLAS-like driver, sgemm.h)
// and the matmul primitive, which on AVX-512 CPUs runs its brgemm kernels
// (f32_gemm.cpp). Neither wins every shape. Measured alone, one thread,
// each the product one thread computes (a part, matmul_parts.h), AMD EPYC
// (Zen 4), oneDNN 2.6.3, 2026-12-06 (bench/gemm_paths.sh), in GFLOP/s:
//
//   C = A Bt (a layer's forward, weights [out, in]), M x N x K:
//     512 x  256 x 1024  sgemm 104  primitive 110  (GPT fc_proj)
//     256 x 1024 x 2048  sgemm  99  primitive 108  (MLP layer 1)
//     256 x 1024 x  784  sgemm  98  primitive 108  (MLP layer 0)
//     512 x  768 x 3072  sgemm 104  primitive 108  (GPT-2 fc_proj)
//     512 x 1024 x  256  sgemm 111  primitive 109  (GPT fc)
//    1024 x 1536 x  768  sgemm 110  primitive 106  (GPT-2 fc)
//   C = At B (the weights' gradients): sgemm ahead on all but one shape.
//   C = A B (the inputs' gradients): mixed alone (512 x 1024 x 256: sgemm
//     94, primitive 110), but inside the training step, its operands
//     fresh from the products before, sgemm ran every one as fast or
//     faster (that one 4.86 ms against 4.99).
//
// The rule below picks the primitive where it led in the step too: A Bt
// with K at least three quarters of N (the benchmark MLP's forward 21.7 +
// 8.65 -> 19.6 + 7.9 ms per step, the GPT's fc_proj 5.3 -> 4.85 per
// layer). It reads the shape alone, so every part is the same call on any
// thread count and results keep their bits (each path sums in an order
// fixed by its shape).
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
