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

/// Dense FLOPs per streaming multiprocessor per cycle, by compute
/// capability, of the units the matmuls above run on: f32 on the CUDA
/// cores (an FMA is 2 FLOPs; CUBLAS_COMPUTE_32F without TF32), bf16/f16
/// with f32 accumulation on the tensor cores. From NVIDIA's data sheets
/// (peak TFLOP/s ÷ SMs ÷ boost clock): V100 f16 125, A100 312, L40S 362,
/// H100 SXM 989, B200 2250 TFLOP/s dense. 0: not known.
static double flopsPerSmCycle(int major, int minor, const char *precision) {
  const bool f32 = std::strcmp(precision, "f32") == 0;
  const bool bf16 = std::strcmp(precision, "bf16") == 0;
  const int cc = major * 10 + minor;
  if (f32)
    return cc >= 86 ? 256 : cc >= 70 ? 128 : 0;
  if (cc == 70 || cc == 72 || cc == 75)
    return bf16 ? 0 : 1024; // Volta/Turing tensor cores: f16 only
  if (cc == 80)
    return 2048;
  if (cc == 86 || cc == 87 || cc == 89 || cc == 120)
    return 1024;
  if (cc == 90)
    return 4096;
  if (cc == 100 || cc == 103)
    return 8192;
  return 0;
}

double lmc_rt_device_peak_flops(const char *precision, char *source,
                                size_t size) {
  int device = 0, major = 0, minor = 0, sms = 0, khz = 0;
  lmc::cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  lmc::cuda::check(cudaDeviceGetAttribute(
                       &major, cudaDevAttrComputeCapabilityMajor, device),
                   "cudaDeviceGetAttribute");
  lmc::cuda::check(cudaDeviceGetAttribute(
                       &minor, cudaDevAttrComputeCapabilityMinor, device),
                   "cudaDeviceGetAttribute");
  lmc::cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                          device),
                   "cudaDeviceGetAttribute");
  lmc::cuda::check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device),
                   "cudaDeviceGetAttribute");
  double perCycle = flopsPerSmCycle(major, minor, precision);
  if (perCycle == 0) {
    std::snprintf(source, size,
                  "no %s peak is known for compute capability %d.%d",
                  precision, major, minor);
    return 0;
  }
  std::snprintf(source, size,
                "%d SMs x %.0f %s FLOP/cycle (compute capability %d.%d, %s) "
                "x %.2f GHz",
                sms, perCycle, precision, major, minor,
                std::strcmp(precision, "f32") == 0 ? "CUDA cores"
                                                   : "tensor cores",
                khz / 1e6);
  return sms * perCycle * khz * 1e3;
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
