//===- FuseElementwise.cpp - elementwise fusion that keeps matmuls named --===//
//
// The pattern set of upstream's linalg-fuse-elementwise-ops, with a control
// function that leaves named linalg ops (matmuls above all) out of every
// fusion, so that lmc-matmul-to-runtime still finds them after bufferization,
// and a step upstream lacks: a broadcast with several consumers (a scalar
// constant spread to an activation's shape, then shared by CSE across
// layers and the backward pass) is recomputed in each consumer instead of
// being written once and read by all.
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

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

/// A linalg.generic that only spreads smaller operands over its result: all
/// loops parallel, one result, every input indexed by a map that leaves
/// out loop dimensions (a 0-d scalar, a row, a mask without the batch
/// dimensions), and a body of a few arith ops (a conversion, a compare).
/// Recomputing it in a consumer's loop costs less than reading it from
/// memory.
bool isCheapBroadcast(linalg::GenericOp op) {
  constexpr unsigned kMaxBodyOps = 4;
  if (op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops())
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(input).isPermutation())
      return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() > kMaxBodyOps + 1)
    return false;
  return llvm::all_of(body.without_terminator(), [](Operation &inner) {
    return isa<arith::ArithDialect>(inner.getDialect()) ||
           isa<linalg::IndexOp>(inner);
  });
}

/// Gives each consumer that elementwise fusion can absorb a cheap broadcast
/// into a copy of its own (single use, so the fusion patterns take it). The
/// original stays with the first consumer, or with the uses fusion cannot
/// take (a matmul operand). Returns whether anything was copied.
bool rematerializeBroadcasts(Operation *root) {
  SmallVector<linalg::GenericOp> broadcasts;
  root->walk([&](linalg::GenericOp op) {
    if (!op->hasOneUse() && !op->use_empty() && isCheapBroadcast(op))
      broadcasts.push_back(op);
  });
  bool changed = false;
  OpBuilder builder(root->getContext());
  for (linalg::GenericOp op : broadcasts) {
    SmallVector<OpOperand *> fusable;
    bool allFusable = true;
    for (OpOperand &use : op->getUses()) {
      bool ok = isa<linalg::GenericOp>(use.getOwner()) &&
                linalg::areElementwiseOpsFusable(&use);
      allFusable &= ok;
      if (ok)
        fusable.push_back(&use);
    }
    ArrayRef<OpOperand *> copied(fusable);
    if (allFusable)
      copied = copied.drop_front();
    for (OpOperand *use : copied) {
      builder.setInsertionPoint(use->getOwner());
      use->set(builder.clone(*op)->getResult(0));
      changed = true;
    }
  }
  return changed;
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
    // Fusion can make new shared broadcasts (a broadcast fused into an op
    // whose other operands are broadcasts too): a few rounds reach them.
    constexpr int kMaxRounds = 4;
    if (failed(applyPatternsGreedily(getOperation(), patterns, config)))
      return signalPassFailure();
    for (int round = 0;
         round < kMaxRounds && rematerializeBroadcasts(getOperation());
         ++round)
      if (failed(applyPatternsGreedily(getOperation(), patterns, config)))
        return signalPassFailure();
  }
};

} // namespace
