//===- FuseElementwise.cpp - elementwise fusion that keeps matmuls named --===//
//
// The pattern set of upstream's linalg-fuse-elementwise-ops, with a control
// function that leaves named linalg ops (matmuls above all) out of every
// fusion, so that lmc-matmul-to-runtime still finds them after bufferization.
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};

} // namespace
