//===- LmcOpsLayerNorm.cpp - verifiers and VJP of lmc.layer_norm ----------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;
using namespace lmc;

namespace {

/// Checks `x` ([.., C], static), `scale` ([C]) and `stats` ([.., 2]) of
/// lmc.layer_norm or its gradient, all of one element type.
LogicalResult verifyShapes(Operation *op, Value x, Value scale, Value stats) {
  RankedTensorType xType = tensorType(x);
  if (xType.getRank() < 1 || !xType.hasStaticShape())
    return op->emitOpError("expected a statically shaped input");
  int64_t c = xType.getShape().back();
  Type element = xType.getElementType();
  RankedTensorType scaleType = tensorType(scale);
  if (scaleType.getShape() != ArrayRef<int64_t>{c} ||
      scaleType.getElementType() != element)
    return op->emitOpError("expected the scale to be [C] (the input's last "
                           "dimension) of the input's element type");
  SmallVector<int64_t> statsShape(xType.getShape().drop_back());
  statsShape.push_back(2);
  RankedTensorType statsType = tensorType(stats);
  if (statsType.getShape() != ArrayRef<int64_t>(statsShape) ||
      statsType.getElementType() != element)
    return op->emitOpError("expected the statistics to be [.., 2] (the "
                           "input's rows) of the input's element type");
  return success();
}

} // namespace

LogicalResult LayerNormOp::verify() {
  if (failed(verifyShapes(*this, getX(), getScale(), getStats())))
    return failure();
  if (getBias().getType() != getScale().getType())
    return emitOpError("expected the bias to have the scale's type");
  if (getY().getType() != getX().getType())
    return emitOpError("expected the result to have the input's type");
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  if (getAccumulate() && getAccumulate().getType() != getX().getType())
    return emitOpError("expected the accumulated cotangent to have the "
                       "input's type");
  return verifyShapes(*this, getX(), getScale(), getStats());
}

// The gradient reads the saved row statistics, which are not
// differentiable.
LogicalResult LayerNormOp::buildVjp(OpBuilder &b, ValueRange cts,
                                    ArrayRef<bool>,
                                    SmallVectorImpl<Value> &out) {
  out.assign(getNumOperands(), Value());
  if (cts.size() > 1 && cts[1])
    return emitOpError("its row statistics are not differentiable");
  if (cts.empty() || !cts[0])
    return success();
  auto grad = LayerNormGradOp::create(
      b, getLoc(), getX().getType(), getScale().getType(),
      getScale().getType(), getX(), getScale(), getStats(), cts[0],
      /*accumulate=*/Value());
  out[0] = grad.getDx();
  out[1] = grad.getDscale();
  out[2] = grad.getDbias();
  return success();
}
