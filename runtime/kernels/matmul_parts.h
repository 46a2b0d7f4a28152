//===- matmul_parts.h - How the threads share a matrix product -*- C++ -*-===//
//
// Part of lmc_kernels (lmc_rt_matmul_*); its own header so that the rule
// is tested as such (test/unit/runtime/kernels/matmul_test.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_MATMUL_PARTS_H
#define LMC_RUNTIME_KERNELS_MATMUL_PARTS_H

#include <cstdint>

namespace lmc::rt {

/// How many parts of C's rows (or columns, when it has more of them) the
/// threads share: the largest power of two, at most `maxParts` (the
/// executable's budget, lmc --matmul-parts), leaving parts of at least 384,
/// else two parts when there are 256 or more and the budget allows two.
/// They follow from the shape and the budget alone, so every part is the
/// same library call on any thread count and the result is bit for bit
/// the same (a library may block K differently for a different M or N). A
/// power of two shares evenly among 2, 4, 8 threads. Each part repacks the
/// other operand, which costs where parts outnumber threads: oneDNN, one
/// thread, GPT-2's 3072 x 768 x 1024 weight gradient (A transposed) 25.97
/// ms in one call, 26.53 in 2 parts, 32.55 in 4; the MLP's 2048 x 2048 x
/// 256 one 11.96, 12.42 in 4, 12.64 in 8, 13.54 in 16 (2026-12-05). Hence
/// a budget sized to the cores rather than a fixed 16.
inline int64_t matmulPartCount(int64_t extent, int64_t maxParts) {
  constexpr int64_t kMinPart = 384, kMinHalf = 128;
  int64_t parts = 1;
  while (parts < maxParts && extent / (2 * parts) >= kMinPart)
    parts *= 2;
  return parts == 1 && maxParts >= 2 && extent >= 2 * kMinHalf ? 2 : parts;
}

/// Under a million multiply-adds: such a product runs on the calling thread
/// in one call (a parallel region costs more than it saves), and f32 ones
/// on OpenBLAS (lmc_rt_matmul_f32).
inline bool isSmallProduct(int64_t batch, int64_t M, int64_t N, int64_t K) {
  return double(batch) * M * N * K < double(1 << 20);
}

/// The most parts a product is cut into (matmulPartCount's `maxParts`):
/// the executable's compiled-in budget, set by lmc_rt_set_matmul_parts()
/// (lmc --matmul-parts); defined in matmul.cpp.
int64_t matmulPartBudget();

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNELS_MATMUL_PARTS_H
