//===- matmul.cpp - Batched GEMM via BLAS --------------------------------===//

#include "lmc/runtime/kernels.h"

#include "lmc/runtime/half.h"

#include "f32_gemm.h"
#include "matmul_parts.h"

#include <cblas.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// libomp's API (declared here: each compiler ships its own omp.h, and the
// fuzz build's clang has none).
extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int n);

namespace {

using lmc::rt::bf16ToFloat;
using lmc::rt::f16ToFloat;

using lmc::rt::isSmallProduct;

/// The most parts a product is cut into (matmulPartCount): set by
/// lmc_rt_set_matmul_parts(), which the executable calls with its
/// compiled-in budget (lmc --matmul-parts).
int64_t maxParts = 16;

// Shared by every precision: only the BLAS entry point differs. In is the
// operands' element type, Out the accumulator's (C, alpha, beta).
// `accumulate`: C += op(A) op(B) (beta = 1), else C = op(A) op(B) (beta = 0,
// C is not read).
template <typename In, typename Out, typename Gemm>
void batchedMatmul(Gemm gemm, const In *A, const In *B, Out *C, int64_t batch,
                   int64_t M, int64_t N, int64_t K, int64_t transA,
                   int64_t transB, int64_t accumulate) {
  if (batch <= 0 || M <= 0 || N <= 0)
    return;
  // K == 0 means an empty sum (and BLAS rejects lda 0): C += 0 leaves C,
  // C = 0 zeroes it.
  if (K <= 0) {
    if (!accumulate)
      std::fill(C, C + batch * M * N, Out(0));
    return;
  }
  const Out beta = accumulate ? Out(1) : Out(0);
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
  const bool byRows = M >= N;
  const int64_t extent = byRows ? M : N;
  const bool small = isSmallProduct(batch, M, N, K);
  const int64_t parts = small ? 1 : lmc::rt::matmulPartCount(extent, maxParts);
  // One thread pool for the whole step: the OpenMP threads that run the
  // compiled loops also share the GEMMs (each part a single-threaded
  // library call), by batch entry and part.
  const int threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) if (threads > 1 && !small)
  for (int64_t job = 0; job < batch * parts; ++job) {
    const int64_t b = job / parts, part = job % parts;
    const In *a = A + b * M * K, *bm = B + b * K * N;
    Out *c = C + b * M * N;
    const int64_t lo = extent * part / parts, hi = extent * (part + 1) / parts;
    if (byRows) // rows lo..hi of A (a column block when transposed) and C
      gemm(CblasRowMajor, ta, tb, blasint(hi - lo), blasint(N), blasint(K),
           Out(1), a + (transA ? lo : lo * K), blasint(lda), bm, blasint(ldb),
           beta, c + lo * N, blasint(N));
    else // columns lo..hi of B (a row block when transposed) and C
      gemm(CblasRowMajor, ta, tb, blasint(M), blasint(hi - lo), blasint(K),
           Out(1), a, blasint(lda), bm + (transB ? lo * K : lo), blasint(ldb),
           beta, c + lo, blasint(N));
  }
}

/// Widens a bf16/f16 operand to f32 (exact) in a per-thread scratch buffer.
const float *widen(const uint16_t *in, size_t count, float (*convert)(uint16_t),
                   std::vector<float> &scratch) {
  scratch.resize(count);
  for (size_t i = 0; i < count; ++i)
    scratch[i] = convert(in[i]);
  return scratch.data();
}

void widenedMatmul(float (*convert)(uint16_t), const uint16_t *A,
                   const uint16_t *B, float *C, int64_t batch, int64_t M,
                   int64_t N, int64_t K, int64_t transA, int64_t transB,
                   int64_t accumulate) {
  if (batch <= 0 || M <= 0 || N <= 0 || K <= 0)
    return batchedMatmul<float, float>(cblas_sgemm, nullptr, nullptr, C, batch,
                                       M, N, K, transA, transB, accumulate);
  thread_local std::vector<float> wideA, wideB;
  const float *a = widen(A, size_t(batch * M * K), convert, wideA);
  const float *b = widen(B, size_t(batch * K * N), convert, wideB);
  batchedMatmul<float, float>(cblas_sgemm, a, b, C, batch, M, N, K, transA,
                              transB, accumulate);
}

using SbgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE,
                          blasint, blasint, blasint, float, const uint16_t *,
                          blasint, const uint16_t *, blasint, float, float *,
                          blasint);

/// OpenBLAS's cblas_sbgemm (native bf16 dot products) when the CPU has
/// AVX512-BF16 and the OpenBLAS in use was built with bf16 support (Debian
/// 12's is not, so it is looked up at run time); null otherwise, and with
/// LMC_BF16_GEMM=emulate.
SbgemmFn nativeSbgemm() {
  static const SbgemmFn native = []() -> SbgemmFn {
    const char *choice = std::getenv("LMC_BF16_GEMM");
    if (choice && std::strcmp(choice, "emulate") == 0)
      return nullptr;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512bf16"))
      return nullptr;
    return reinterpret_cast<SbgemmFn>(dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
  }();
  return native;
}

} // namespace

extern "C" void lmc_rt_matmul_bf16(const uint16_t *A, const uint16_t *B,
                                   float *C, int64_t batch, int64_t M,
                                   int64_t N, int64_t K, int64_t transA,
                                   int64_t transB, int64_t accumulate) {
  if (SbgemmFn sbgemm = nativeSbgemm())
    batchedMatmul<uint16_t, float>(sbgemm, A, B, C, batch, M, N, K, transA,
                                   transB, accumulate);
  else
    widenedMatmul(bf16ToFloat, A, B, C, batch, M, N, K, transA, transB,
                  accumulate);
}

extern "C" void lmc_rt_matmul_f16(const uint16_t *A, const uint16_t *B,
                                  float *C, int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int64_t transA, int64_t transB,
                                  int64_t accumulate) {
  widenedMatmul(f16ToFloat, A, B, C, batch, M, N, K, transA, transB,
                accumulate);
}

extern "C" void lmc_rt_matmul_f32(const float *A, const float *B, float *C,
                                  int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int64_t transA, int64_t transB,
                                  int64_t accumulate) {
  // oneDNN (f32_gemm.h). Small products run outside any OpenMP region,
  // where oneDNN would start threads of its own; the single-threaded
  // OpenBLAS does them.
  const bool small = isSmallProduct(batch, M, N, K);
  batchedMatmul<float, float>(small ? cblas_sgemm : lmc::rt::f32Gemm, A, B, C,
                              batch, M, N, K, transA, transB, accumulate);
}

extern "C" void lmc_rt_matmul_f64(const double *A, const double *B, double *C,
                                  int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int64_t transA, int64_t transB,
                                  int64_t accumulate) {
  batchedMatmul<double, double>(cblas_dgemm, A, B, C, batch, M, N, K, transA,
                                transB, accumulate);
}

// Weak: the CUDA support library defines the GPU's (runtime/cuda).
__attribute__((weak)) void lmc_rt_copy_in(void *dst, const void *src,
                                          int64_t bytes) {
  std::memcpy(dst, src, size_t(bytes));
}

// Weak: the CUDA support library's arena is device memory. On the host the
// arena is one anonymous mapping, made when a step first asks and kept
// (pages are touched only as the planned buffers are written), with
// transparent huge pages requested: the step's buffers are hundreds of
// megabytes at GPT-2 size, and 4 KiB pages would cost a TLB miss per page.
void lmc_rt_poison_buffer(void *data, int64_t bytes) {
  std::memset(data, 0xFF, size_t(bytes));
}

__attribute__((weak)) void *lmc_rt_step_arena(int64_t bytes) {
  static void *arena = nullptr;
  static size_t capacity = 0;
  if (bytes <= 0)
    return arena;
  if (size_t(bytes) > capacity) {
    if (arena)
      munmap(arena, capacity);
    constexpr size_t kHugePage = size_t(2) << 20;
    size_t rounded = (size_t(bytes) + kHugePage - 1) / kHugePage * kHugePage;
    void *mapped = mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED) {
      std::fprintf(stderr,
                   "error: out of memory mapping the training step's "
                   "%lld bytes of buffers: %s\n",
                   static_cast<long long>(bytes), std::strerror(errno));
      std::exit(1);
    }
    madvise(mapped, rounded, MADV_HUGEPAGE); // advice; fine if refused
    arena = mapped;
    capacity = rounded;
  }
  return arena;
}

// Weak: the runtime's data-parallel step defines the one that starts
// all-reduces (split_step.cpp); a JIT-run step needs none.
__attribute__((weak)) void lmc_rt_gradient_ready(int64_t) {}

int64_t lmc::rt::matmulPartBudget() { return maxParts; }

void lmc_rt_set_matmul_parts(int64_t parts) {
  maxParts = std::clamp<int64_t>(parts, 1, 16);
}

void lmc_rt_set_threads(int n) {
  // The OpenMP threads run everything parallel, GEMM slices included; a
  // threaded BLAS would be a second pool contending for the same cores.
  openblas_set_num_threads(1);
  omp_set_num_threads(n);
}

int64_t lmc_rt_thread_count(void) { return omp_get_max_threads(); }
