//===- FuseElementwise.cpp - elementwise fusion that keeps matmuls named --===//
//
// The pattern set of upstream's linalg-fuse-elementwise-ops, with a control
// function that leaves named linalg ops (matmuls above all) out of every
// fusion, so that lmc-matmul-to-runtime still finds them after bufferization,
// and a step upstream lacks: cheap ops with several consumers are recomputed
// in each (Rematerialize.h) instead of being written once and read by all.
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "Rematerialize.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lmc {
#define GEN_PASS_DEF_LMCFUSEELEMENTWISE
#include "lmc/Conversion/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace {

/// A linalg op other than linalg.generic.
bool isNamedLinalgOp(Operation *op) {
  return op && isa<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op);
}

struct FuseElementwisePass
    : public lmc::impl::LmcFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Upstream's default (fuse a producer with a single use), minus named
    // ops on either side.
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             !isNamedLinalgOp(producer) && !isNamedLinalgOp(fused->getOwner());
    };
    RewritePatternSet patternList(context);
    linalg::populateElementwiseOpsFusionPatterns(patternList, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patternList, control);
    linalg::populateConstantFoldLinalgOperations(patternList, control);
    affine::AffineApplyOp::getCanonicalizationPatterns(patternList, context);
    linalg::GenericOp::getCanonicalizationPatterns(patternList, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patternList, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patternList,
                                                         context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patternList);
    FrozenRewritePatternSet patterns(std::move(patternList));
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    // Fusion makes new candidates (a GELU's chain is recomputed one link
    // per round): a few rounds reach them.
    constexpr int kMaxRounds = 8;
    if (failed(applyPatternsGreedily(getOperation(), patterns, config)))
      return signalPassFailure();
    for (int round = 0; round < kMaxRounds &&
                        (lmc::rematerializeBroadcasts(getOperation()) |
                         lmc::rematerializeIntoConsumers(getOperation()));
         ++round)
      if (failed(applyPatternsGreedily(getOperation(), patterns, config)))
        return signalPassFailure();
  }
};

} // namespace
