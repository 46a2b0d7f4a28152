//===- sgemm.h - The f32 GEMM the runtime's kernels call -----------------===//
//
// oneDNN's sgemm behind cblas_sgemm's signature (row-major), so that the
// kernels written against CBLAS call it unchanged. oneDNN stores C without
// OpenBLAS's separate pass zeroing it when beta = 0, and is faster on the
// training steps' shapes and on the attention kernel's blocks
// (measured 2026-12-05; the history of docs/perf.md). Called inside an OpenMP region, or with one
// OpenMP thread, it runs on the calling thread alone.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_SGEMM_H
#define LMC_RUNTIME_KERNELS_SGEMM_H

#include <cblas.h>

namespace lmc::rt {

void sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA, CBLAS_TRANSPOSE transB,
           blasint M, blasint N, blasint K, float alpha, const float *A,
           blasint lda, const float *B, blasint ldb, float beta, float *C,
           blasint ldc);

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNELS_SGEMM_H
