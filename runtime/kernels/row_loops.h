//===- row_loops.h - how the runtime's own row loops are compiled -*- C++ -*-===//
//
// The attention and layer-norm kernels' row passes (maxima, sums,
// elementwise updates of a row in cache) are lmc's own arithmetic, written
// as plain loops the compiler vectorizes: compiled for AVX-512 and AVX2 too
// (the best chosen at load time), their reductions over a fixed number of
// lanes so that the sums' order is the same whatever the vector width.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_ROW_LOOPS_H
#define LMC_RUNTIME_KERNELS_ROW_LOOPS_H

#include <cstdint>

#if defined(__x86_64__) && !defined(__clang__)
#define LMC_ROW_LOOP __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LMC_ROW_LOOP
#endif

namespace lmc::rt {

/// Lanes of the row reductions: each lane sums every kLanes-th element,
/// then the lanes are added in order.
constexpr int64_t kRowLanes = 16;

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNELS_ROW_LOOPS_H
