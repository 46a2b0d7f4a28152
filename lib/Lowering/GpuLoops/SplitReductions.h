//===- SplitReductions.h - reductions over few outputs in two steps -*- C++
//-*-===//
//
// Part of lmc-linalg-to-gpu-loops (docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_GPULOOPS_SPLITREDUCTIONS_H
#define LMC_LIB_LOWERING_GPULOOPS_SPLITREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace lmc {

/// What a split reduction became, in program order: the threads that
/// compute the partial results (an scf.parallel, a kernel of its own) and
/// the generic that combines them into the outputs.
struct SplitReduction {
  mlir::scf::ParallelOp partials;
  mlir::linalg::GenericOp combine;
};

/// Splits reduction `op` (on buffers, parallel dimensions first, at
/// function level) when it has fewer than `threads` output elements and
/// enough reduced iterations to keep more threads busy: each output gets S
/// partial results, partial s reducing iterations s, s + S, s + 2S, ... of
/// the reduced dimensions (linearized), so that neighbouring threads read
/// neighbouring elements, from the combiner's neutral element; then one
/// generic combines the S partials into the output. Every output must be a
/// reduction `out = out ⊕ value` whose combiner ⊕ has a neutral element (sum,
/// max, min, ...); the body may read its indices (`linalg.index`: a loss's
/// one-hot). Returns failure, with nothing changed, when `op` does not qualify.
mlir::FailureOr<SplitReduction> splitReduction(mlir::RewriterBase &rewriter,
                                               mlir::linalg::GenericOp op,
                                               int64_t threads);

} // namespace lmc

#endif // LMC_LIB_LOWERING_GPULOOPS_SPLITREDUCTIONS_H
