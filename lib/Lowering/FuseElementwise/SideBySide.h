//===- SideBySide.h - one loop for a producer and its consumer -*- C++ -*-===//
//
// Upstream's elementwise fusion moves a producer into a consumer it alone
// feeds; one with other users stays and runs as well (its body recomputed
// in the fused op). A training step is full of such pairs over the same
// loops: AdamW's first and second moments, each a result of the step and
// read by the parameter update; a residual sum read by the next layer norm
// and saved for the backward pass. Fusing them side by side makes one loop
// that computes both, keeps the producer's results as results of the fused
// op, and reads the shared inputs once.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_FUSEELEMENTWISE_SIDEBYSIDE_H
#define LMC_LIB_LOWERING_FUSEELEMENTWISE_SIDEBYSIDE_H

#include "mlir/IR/PatternMatch.h"

namespace lmc {

/// Adds the pattern that fuses an all-parallel linalg.generic with several
/// users into a consumer over the same loops that reads its results in
/// place, when the producer's other users all come after the consumer in
/// its block (the fused op takes the consumer's place).
void populateSideBySideFusionPatterns(mlir::RewritePatternSet &patterns);

} // namespace lmc

#endif // LMC_LIB_LOWERING_FUSEELEMENTWISE_SIDEBYSIDE_H
