//===- sgemm.cpp - The f32 GEMM on oneDNN --------------------------------===//

#include "sgemm.h"

#include <dnnl.h>

#include <cstdio>
#include <cstdlib>

void lmc::rt::sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA,
                    CBLAS_TRANSPOSE transB, blasint M, blasint N, blasint K,
                    float alpha, const float *A, blasint lda, const float *B,
                    blasint ldb, float beta, float *C, blasint ldc) {
  // dnnl_sgemm is row-major only; the kernels never ask for column-major.
  dnnl_status_t status =
      order != CblasRowMajor
          ? dnnl_invalid_arguments
          : dnnl_sgemm(transA == CblasTrans ? 'T' : 'N',
                       transB == CblasTrans ? 'T' : 'N', M, N, K, alpha, A,
                       lda, B, ldb, beta, C, ldc);
  if (status != dnnl_success) {
    std::fprintf(stderr,
                 "lmc runtime: oneDNN sgemm failed (status %d, M=%d N=%d "
                 "K=%d) [%s:%d]\n",
                 int(status), int(M), int(N), int(K), __FILE__, __LINE__);
    std::abort();
  }
}
