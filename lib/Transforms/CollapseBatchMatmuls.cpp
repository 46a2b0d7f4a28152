//===- CollapseBatchMatmuls.cpp - batch_matmul from a partitioned step ----===//
//
// For sharding, lmc lowers a matmul with several batch dimensions
// (attention's [batch, heads, t, t]) to a linalg.generic contraction that
// keeps them apart, so a split of the heads survives propagation. After
// partitioning every dimension is local: the batch dimensions collapse
// into one and the contraction becomes the linalg.batch_matmul that
// lmc-matmul-to-runtime hands to BLAS (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace lmc {
#define GEN_PASS_DEF_LMCCOLLAPSEBATCHMATMULS
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The operand maps of `op` with the batch loops dropped and the m, n, k
/// loops renumbered 1, 2, 3 after one batch loop 0; failure unless `op`
/// is a contraction with one m, n and k loop whose batch loops (two or
/// more) lead every operand in loop order.
FailureOr<SmallVector<AffineMap>> batchMatmulMaps(linalg::GenericOp op) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2)
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() < 2 || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1)
    return failure();
  MLIRContext *context = op.getContext();
  auto renumber = [&](unsigned loop) -> std::optional<AffineExpr> {
    if (loop == dims->m[0])
      return getAffineDimExpr(1, context);
    if (loop == dims->n[0])
      return getAffineDimExpr(2, context);
    if (loop == dims->k[0])
      return getAffineDimExpr(3, context);
    return std::nullopt;
  };
  const unsigned batch = dims->batch.size();
  SmallVector<AffineMap> maps;
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (map.getNumResults() != batch + 2)
      return failure();
    SmallVector<AffineExpr> exprs{getAffineDimExpr(0, context)};
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop)
        return failure();
      if (i < batch) {
        if (loop.getPosition() != dims->batch[i])
          return failure();
        continue;
      }
      std::optional<AffineExpr> renumbered = renumber(loop.getPosition());
      if (!renumbered)
        return failure();
      exprs.push_back(*renumbered);
    }
    maps.push_back(AffineMap::get(4, 0, exprs, context));
  }
  return maps;
}

/// [b1, ..., bB, r, c] ↔ [b1 * ... * bB, r, c].
SmallVector<ReassociationIndices> batchGroups(unsigned batch) {
  SmallVector<ReassociationIndices> groups(1);
  for (unsigned d = 0; d < batch; ++d)
    groups[0].push_back(d);
  groups.push_back({int64_t(batch)});
  groups.push_back({int64_t(batch) + 1});
  return groups;
}

struct CollapseBatchMatmul : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<AffineMap>> maps = batchMatmulMaps(op);
    if (failed(maps))
      return failure();
    Location loc = op.getLoc();
    unsigned batch = op.getNumLoops() - 3;
    SmallVector<ReassociationIndices> groups = batchGroups(batch);
    auto collapse = [&](Value value) -> Value {
      return tensor::CollapseShapeOp::create(rewriter, loc, value, groups);
    };
    SmallVector<Value> inputs{collapse(op.getDpsInputs()[0]),
                              collapse(op.getDpsInputs()[1])};
    Value init = collapse(op.getDpsInits()[0]);
    SmallVector<Attribute> mapAttrs;
    for (AffineMap map : *maps)
      mapAttrs.push_back(AffineMapAttr::get(map));
    auto product = linalg::BatchMatmulOp::create(
        rewriter, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
        {rewriter.getNamedAttr("indexing_maps",
                               rewriter.getArrayAttr(mapAttrs))});
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, resultType, product.getResult(0), groups);
    return success();
  }
};

struct CollapseBatchMatmulsPass
    : impl::LmcCollapseBatchMatmulsBase<CollapseBatchMatmulsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<CollapseBatchMatmul>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
} // namespace lmc
