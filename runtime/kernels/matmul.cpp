//===- matmul.cpp - Batched GEMM via BLAS --------------------------------===//

#include "lmc/runtime/kernels.h"

#include <cblas.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

namespace {

// Shared by f32/f64: only the BLAS entry point differs.
template <typename T, typename Gemm>
void batchedMatmul(Gemm gemm, const T *A, const T *B, T *C, int64_t batch,
                   int64_t M, int64_t N, int64_t K, int64_t transA,
                   int64_t transB) {
  if (batch <= 0 || M <= 0 || N <= 0)
    return;
  // K == 0 means an empty sum: C += 0, nothing to do (and BLAS rejects lda 0).
  if (K <= 0)
    return;
  // This BLAS takes 32-bit int dimensions; a larger matrix is a compiler bug
  // (it should have tiled), not a user error, so fail loudly.
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX) {
    std::fprintf(stderr,
                 "lmc runtime: matmul dimension exceeds INT_MAX "
                 "(M=%lld N=%lld K=%lld) [%s:%d]\n",
                 (long long)M, (long long)N, (long long)K, __FILE__, __LINE__);
    std::abort();
  }
  const CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  // Leading dimension = row length of the matrix as stored.
  const int64_t lda = transA ? M : K;
  const int64_t ldb = transB ? K : N;
  for (int64_t b = 0; b < batch; ++b)
    gemm(CblasRowMajor, ta, tb, blasint(M), blasint(N), blasint(K), T(1),
         A + b * M * K, blasint(lda), B + b * K * N, blasint(ldb), T(1),
         C + b * M * N, blasint(N));
}

} // namespace

extern "C" void lmc_rt_matmul_f32(const float *A, const float *B, float *C,
                                  int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int64_t transA, int64_t transB) {
  batchedMatmul<float>(cblas_sgemm, A, B, C, batch, M, N, K, transA, transB);
}

extern "C" void lmc_rt_matmul_f64(const double *A, const double *B, double *C,
                                  int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int64_t transA, int64_t transB) {
  batchedMatmul<double>(cblas_dgemm, A, B, C, batch, M, N, K, transA, transB);
}

void lmc_rt_set_threads(int n) { openblas_set_num_threads(n); }
