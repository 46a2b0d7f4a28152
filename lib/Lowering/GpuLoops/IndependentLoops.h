//===- IndependentLoops.h - loops of a nest that write apart -*- C++ -*-===//
//
// Part of lmc-linalg-to-gpu-loops (docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_GPULOOPS_INDEPENDENTLOOPS_H
#define LMC_LIB_LOWERING_GPULOOPS_INDEPENDENTLOOPS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace lmc {

/// Turns the perfect nest of scf.for loops under `outer` (rectangular,
/// without results) into an scf.parallel over its independent loops around
/// the others, when the innermost body stores to one freshly allocated
/// buffer at one place, reads that buffer only there, reads other buffers
/// that are not views of it, and has no other side effects. A loop is
/// independent when its induction variable is itself one of the store's
/// indices: two of its iterations write different elements. The others
/// stay sequential, in their order, so each element sees the same updates
/// in the same order as before (the embedding gradient's scatter-add over
/// B·T token positions becomes one thread per embedding column, summing
/// exactly as the CPU does). Returns failure, with nothing changed, when
/// the nest does not qualify or no loop is independent.
mlir::FailureOr<mlir::scf::ParallelOp>
parallelizeIndependentLoops(mlir::RewriterBase &rewriter,
                            mlir::scf::ForOp outer);

} // namespace lmc

#endif // LMC_LIB_LOWERING_GPULOOPS_INDEPENDENTLOOPS_H
