//===- FuseElementwise.cpp - elementwise fusion that keeps matmuls named --===//
//
// The pattern set of upstream's linalg-fuse-elementwise-ops, with a control
// function that leaves named linalg ops (matmuls above all) out of every
// fusion, so that lmc-matmul-to-runtime still finds them after bufferization,
// and two steps upstream lacks: cheap ops with several consumers are
// recomputed in each (DuplicateProducers.h) instead of being written once and
// read by all, and the other producers with several consumers share a loop
// with one of them (SideBySide.h).
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "DuplicateProducers.h"
#include "SideBySide.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lmc {
#define GEN_PASS_DEF_LMCFUSEELEMENTWISE
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace {

/// A linalg op other than linalg.generic.
bool isNamedLinalgOp(Operation *op) {
  return op && isa<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op);
}

/// Upstream's elementwise fusion and the canonicalizations that tidy
/// after it.
void populateFusionPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  // Upstream's default (fuse a producer with a single use), minus named
  // ops on either side.
  linalg::ControlFusionFn control = [](OpOperand *fused) {
    Operation *producer = fused->get().getDefiningOp();
    return producer && producer->hasOneUse() && !isNamedLinalgOp(producer) &&
           !isNamedLinalgOp(fused->getOwner());
  };
  linalg::populateElementwiseOpsFusionPatterns(patterns, control);
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
  linalg::populateConstantFoldLinalgOperations(patterns, control);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
  context->getLoadedDialect<linalg::LinalgDialect>()
      ->getCanonicalizationPatterns(patterns);
}

struct FuseElementwisePass
    : public lmc::impl::LmcFuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet fusionList(&getContext());
    populateFusionPatterns(fusionList);
    FrozenRewritePatternSet fusion(std::move(fusionList));
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    // Fusion makes new candidates (a GELU's chain is recomputed one link
    // per round): a few rounds reach them.
    constexpr int kMaxRounds = 8;
    if (failed(applyPatternsGreedily(getOperation(), fusion, config)))
      return signalPassFailure();
    for (int round = 0; round < kMaxRounds &&
                        (lmc::duplicateBroadcasts(getOperation()) |
                         lmc::duplicateIntoConsumers(getOperation(), intoSums));
         ++round)
      if (failed(applyPatternsGreedily(getOperation(), fusion, config)))
        return signalPassFailure();
    // Side-by-side fusion last: a producer recomputed in its consumers
    // (never written) beats one written beside them.
    RewritePatternSet finalList(&getContext());
    populateFusionPatterns(finalList);
    lmc::populateSideBySideFusionPatterns(finalList);
    if (failed(applyPatternsGreedily(getOperation(), std::move(finalList),
                                     config)))
      return signalPassFailure();
  }
};

} // namespace
