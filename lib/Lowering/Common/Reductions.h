//===- Reductions.h - what splitting a reduction needs to know -*- C++ -*-===//
//
// Shared by the passes that cut a long reduction into partial results and
// combine them (lmc-chunk-reductions on the CPU, lmc-linalg-to-gpu-loops'
// split reductions on the GPU).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_COMMON_REDUCTIONS_H
#define LMC_LIB_LOWERING_COMMON_REDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace lmc {

/// The combiner of each of `op`'s outputs: the one op computing `out ⊕
/// value` with a neutral element (so that partial results can start from
/// it), or failure.
mlir::FailureOr<llvm::SmallVector<mlir::Operation *>>
outputCombiners(mlir::linalg::GenericOp op);

/// The largest divisor of `n` that is at most `bound` (at least 1).
int64_t largestDivisorAtMost(int64_t n, int64_t bound);

} // namespace lmc

#endif // LMC_LIB_LOWERING_COMMON_REDUCTIONS_H
