//===- CollapseInnerLoops.cpp - Long innermost loops for elementwise nests ===//
//
// A loop nest vectorizes and streams along its innermost loop only. The
// elementwise ops of a convolutional network run over [F, C, 3, 3]
// weights and [N, C, 8, 8] activations: an innermost loop of 3 or 8
// iterations, which LLVM leaves scalar. With that, and the optimizer's
// hyperparameter reads kept inside the loop (now hoisted: the noalias
// step arguments of lmc-outline-loop-nests), the AdamW update over
// ResNet-18's convolution weights was 37 % of its step. Every
// operand of such an op is a dense buffer, so the trailing dimensions that
// all its maps keep together fold into one loop: [F, C * 9], [N, C * 64].
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace lmc {
#define GEN_PASS_DEF_LMCCOLLAPSEINNERLOOPS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The trailing loops to fold into one for `op`, or an empty group: the
/// fewest trailing loops, the first never among them, whose iterations
/// reach `minInner` (all of them but the first when they do not), such
/// that every map keeps them adjacent and in order.
ReassociationIndices innerGroup(linalg::GenericOp op, int64_t minInner) {
  if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() != 0 ||
      op.getNumLoops() < 3 || op.hasIndexSemantics())
    return {};
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape())
      return {};
  }
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  int64_t last = int64_t(extents.size()) - 1;
  if (ShapedType::isDynamic(extents[last]) || extents[last] >= minInner)
    return {};
  int64_t first = last, product = extents[last];
  while (first > 1 && product < minInner) {
    --first;
    if (ShapedType::isDynamic(extents[first]))
      return {};
    product *= extents[first];
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // Broadcasts by a constant index (a unit dimension read at 0) are left
  // alone.
  if (!llvm::all_of(maps,
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return {};
  // Fewer loops when the maps break the longer run apart.
  for (; first < last; ++first) {
    ReassociationIndices group;
    for (int64_t d = first; d <= last; ++d)
      group.push_back(d);
    if (linalg::areDimSequencesPreserved(maps, {group}))
      return group;
  }
  return {};
}

struct CollapseInnerLoopsPass
    : public impl::LmcCollapseInnerLoopsBase<CollapseInnerLoopsPass> {
  using LmcCollapseInnerLoopsBase::LmcCollapseInnerLoopsBase;
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, ReassociationIndices>> work;
    getOperation()->walk([&](linalg::GenericOp op) {
      ReassociationIndices group = innerGroup(op, minInner);
      if (!group.empty())
        work.push_back({op, group});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, group] : work) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, {group}, rewriter);
      if (failed(collapsed))
        continue; // left as it is: correct, only slower
      rewriter.eraseOp(op);
      shareViews(collapsed->collapsedOp, rewriter);
    }
  }

  /// One collapse_shape per buffer: the op reads and writes an in-place
  /// update's buffer (AdamW's parameter and moments) through two views
  /// that OpenMP's outlining would pass apart, and LLVM's vectorizer,
  /// unable to prove that two pointers that are equal do not overlap,
  /// would then keep the loop scalar.
  static void shareViews(linalg::LinalgOp op, IRRewriter &rewriter) {
    SmallVector<memref::CollapseShapeOp> seen;
    for (OpOperand &operand : op->getOpOperands()) {
      auto view = operand.get().getDefiningOp<memref::CollapseShapeOp>();
      if (!view)
        continue;
      auto same = llvm::find_if(seen, [&](memref::CollapseShapeOp other) {
        return other.getSrc() == view.getSrc() &&
               other.getReassociation() == view.getReassociation();
      });
      if (same == seen.end()) {
        seen.push_back(view);
        continue;
      }
      rewriter.modifyOpInPlace(op, [&] { operand.set(*same); });
      if (view->use_empty())
        rewriter.eraseOp(view);
    }
  }
};

} // namespace
} // namespace lmc
