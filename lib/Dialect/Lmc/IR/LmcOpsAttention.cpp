//===- LmcOpsAttention.cpp - verifier and VJP of lmc.attention ------------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;
using namespace lmc;

namespace {

/// Whether `type` is `batch` followed by `rows` x `columns`.
bool isBatched(RankedTensorType type, ArrayRef<int64_t> batch, int64_t rows,
               int64_t columns) {
  ArrayRef<int64_t> shape = type.getShape();
  return shape.size() == batch.size() + 2 &&
         shape.take_front(batch.size()) == batch &&
         shape[batch.size()] == rows && shape[batch.size() + 1] == columns;
}

} // namespace

LogicalResult AttentionOp::verify() {
  RankedTensorType q = tensorType(getQ()), kt = tensorType(getKt()),
                   v = tensorType(getV()), mask = tensorType(getMask());
  if (q.getRank() < 2 || !q.hasStaticShape())
    return emitOpError("expected a statically shaped query of rank 2 or more");
  ArrayRef<int64_t> batch = q.getShape().drop_back(2);
  int64_t t = q.getShape()[batch.size()], d = q.getShape().back();
  if (kt.getRank() != q.getRank() || !kt.hasStaticShape())
    return emitOpError("expected the transposed keys to have the query's rank");
  int64_t s = kt.getShape().back();
  if (!isBatched(kt, batch, d, s))
    return emitOpError("expected the transposed keys to be [batch.., D, S] "
                       "with the query's batch and D");
  if (v.getRank() != q.getRank() || !v.hasStaticShape() ||
      !isBatched(v, batch, s, v.getShape().back()))
    return emitOpError("expected the values to be [batch.., S, Dv]");
  SmallVector<int64_t> ones(batch.size(), 1);
  if (!isBatched(mask, ones, t, s))
    return emitOpError("expected the mask to be [1.., T, S]");
  Type element = q.getElementType();
  if (kt.getElementType() != element || v.getElementType() != element ||
      tensorType(getOut()).getElementType() != element ||
      tensorType(getStats()).getElementType() != element)
    return emitOpError("expected one float element type");
  if (!isBatched(tensorType(getOut()), batch, t, v.getShape().back()))
    return emitOpError("expected the result to be [batch.., T, Dv]");
  if (!isBatched(tensorType(getStats()), batch, t, 2))
    return emitOpError("expected the statistics to be [batch.., T, 2]");
  if (getExps() && (tensorType(getExps()).getElementType() != element ||
                    !isBatched(tensorType(getExps()), batch, t, s)))
    return emitOpError("expected the exponentials to be [batch.., T, S] of "
                       "the query's element type");
  return success();
}

LogicalResult AttentionGradOp::verify() {
  if (!getExps())
    return success();
  ArrayRef<int64_t> stats = tensorType(getStats()).getShape();
  RankedTensorType exps = tensorType(getExps());
  int64_t s = tensorType(getKt()).getShape().back();
  if (exps.getElementType() != tensorType(getQ()).getElementType() ||
      !isBatched(exps, stats.drop_back(2), stats[stats.size() - 2], s))
    return emitOpError("expected the exponentials to be [batch.., T, S] of "
                       "the query's element type");
  return success();
}

// The gradient op reads the kept exponentials, or recomputes them from the
// saved row statistics; neither is differentiable.
LogicalResult AttentionOp::buildVjp(OpBuilder &b, ValueRange cts,
                                    ArrayRef<bool>,
                                    SmallVectorImpl<Value> &out) {
  out.assign(getNumOperands(), Value());
  if (llvm::any_of(cts.drop_front(), [](Value ct) { return bool(ct); }))
    return emitOpError("its row statistics and exponentials are not "
                       "differentiable");
  if (cts.empty() || !cts[0])
    return success();
  auto grad = AttentionGradOp::create(
      b, getLoc(), getQ().getType(), getKt().getType(), getV().getType(),
      getQ(), getKt(), getV(), getMask(), getOut(), getStats(), cts[0],
      getExps(), getScaleAttr());
  out[0] = grad.getDq();
  out[1] = grad.getDkt();
  out[2] = grad.getDv();
  return success();
}
