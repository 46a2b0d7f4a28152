//===- cuda_matmul.cpp - lmc_rt_cuda_matmul_* on cuBLAS -------------------===//
//
// The CUDA target's matmul kernels: the arguments and semantics of
// lmc_rt_matmul_* (lmc/runtime/kernels.h: row-major, C[b] (+)= op(A[b]) *
// op(B[b]), beta 1 or 0) on cublasGemmStridedBatchedEx. cuBLAS is
// column-major, so each call computes C^T = op(B)^T op(A)^T. f32 products
// use f32 compute (CUBLAS_COMPUTE_32F: no TF32 rounding), and bf16/f16
// operands accumulate in f32 on the tensor cores, as the CPU kernels
// accumulate in f32. The runtime's gradient sums (lmc_rt_device_axpy_f32 /
// _scale_f32) use the same handle, on the same stream.
//
//===----------------------------------------------------------------------===//

#include "cuda_support.h"

#include "lmc/runtime/device.h"

#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void checkBlas(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  std::fprintf(stderr, "error: cuBLAS: %s failed: %s\n", what,
               cublasGetStatusString(status));
  std::fflush(stdout);
  std::exit(1);
}

cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t created;
    checkBlas(cublasCreate(&created), "cublasCreate");
    checkBlas(cublasSetStream(created, lmc::cuda::stream()),
              "cublasSetStream");
    return created;
  }();
  return h;
}

/// C = op(A) op(B), plus C when `accumulate` (beta 1, else 0). Scalar is
/// alpha's and beta's type: C's element type.
template <typename Scalar>
void gemm(const void *a, const void *b, void *c, cudaDataType inType,
          cudaDataType outType, cublasComputeType_t compute, int64_t batch,
          int64_t m, int64_t n, int64_t k, int64_t transA, int64_t transB,
          int64_t accumulate) {
  const Scalar one = 1, zero = 0;
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkBlas(cublasGemmStridedBatchedEx(
                handle(), opB, opA, int(n), int(m), int(k), &one, b, inType,
                int(transB ? k : n), n * k, a, inType, int(transA ? m : k),
                m * k, accumulate ? &one : &zero, c, outType, int(n), m * n,
                int(batch), compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmStridedBatchedEx");
}

} // namespace

extern "C" {

void lmc_rt_cuda_matmul_f32(const float *A, const float *B, float *C,
                            int64_t batch, int64_t M, int64_t N, int64_t K,
                            int64_t transA, int64_t transB,
                            int64_t accumulate) {
  gemm<float>(A, B, C, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, batch, M, N,
              K, transA, transB, accumulate);
}

void lmc_rt_cuda_matmul_f64(const double *A, const double *B, double *C,
                            int64_t batch, int64_t M, int64_t N, int64_t K,
                            int64_t transA, int64_t transB,
                            int64_t accumulate) {
  gemm<double>(A, B, C, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, batch, M,
               N, K, transA, transB, accumulate);
}

void lmc_rt_cuda_matmul_bf16(const uint16_t *A, const uint16_t *B, float *C,
                             int64_t batch, int64_t M, int64_t N, int64_t K,
                             int64_t transA, int64_t transB,
                             int64_t accumulate) {
  gemm<float>(A, B, C, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, batch, M,
              N, K, transA, transB, accumulate);
}

void lmc_rt_cuda_matmul_f16(const uint16_t *A, const uint16_t *B, float *C,
                            int64_t batch, int64_t M, int64_t N, int64_t K,
                            int64_t transA, int64_t transB,
                            int64_t accumulate) {
  gemm<float>(A, B, C, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, batch, M, N,
              K, transA, transB, accumulate);
}

void lmc_rt_device_axpy_f32(int64_t n, float a, const float *x, float *y) {
  checkBlas(cublasSaxpy_64(handle(), n, &a, x, 1, y, 1), "cublasSaxpy");
}

void lmc_rt_device_scale_f32(int64_t n, float a, float *x) {
  checkBlas(cublasSscal_64(handle(), n, &a, x, 1), "cublasSscal");
}

double lmc_rt_device_matmul_flops(const char *precision) {
  constexpr int64_t n = 4096;
  const bool low =
      std::strcmp(precision, "bf16") == 0 || std::strcmp(precision, "f16") == 0;
  size_t inBytes = size_t(n) * n * (low ? 2 : 4);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  lmc::cuda::check(cudaMalloc(&a, inBytes), "cudaMalloc");
  lmc::cuda::check(cudaMalloc(&b, inBytes), "cudaMalloc");
  lmc::cuda::check(cudaMalloc(&c, size_t(n) * n * 4), "cudaMalloc");
  // Bytes of 0x3c: every f32/bf16/f16 operand about 0.01 to 1, finite sums.
  lmc::cuda::check(cudaMemset(a, 0x3c, inBytes), "cudaMemset");
  lmc::cuda::check(cudaMemset(b, 0x3c, inBytes), "cudaMemset");
  lmc::cuda::check(cudaMemset(c, 0, size_t(n) * n * 4), "cudaMemset");
  auto multiply = [&] {
    if (std::strcmp(precision, "bf16") == 0)
      lmc_rt_cuda_matmul_bf16(static_cast<uint16_t *>(a),
                              static_cast<uint16_t *>(b),
                              static_cast<float *>(c), 1, n, n, n, 0, 0, 1);
    else if (std::strcmp(precision, "f16") == 0)
      lmc_rt_cuda_matmul_f16(static_cast<uint16_t *>(a),
                             static_cast<uint16_t *>(b),
                             static_cast<float *>(c), 1, n, n, n, 0, 0, 1);
    else
      lmc_rt_cuda_matmul_f32(static_cast<float *>(a), static_cast<float *>(b),
                             static_cast<float *>(c), 1, n, n, n, 0, 0, 1);
  };
  multiply(); // cuBLAS start-up, kernel selection
  lmc::cuda::synchronize("a cuBLAS matmul");
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto start = std::chrono::steady_clock::now();
    multiply();
    lmc::cuda::synchronize("a cuBLAS matmul");
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (seconds > 0)
      best = std::max(best, 2.0 * n * n * n / seconds);
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return best;
}

} // extern "C"
