//===- LmcVjps.cpp - vector-Jacobian products of lmc ops ------------------===//
//
// Each VJP is written in lmc ops so that the gradient graph goes through the
// same lowering as the forward graph. `g` is the result cotangent.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;
using namespace lmc;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

LogicalResult NegOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = NegOp::create(b, getLoc(), g);
  return success();
}

LogicalResult ReluOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                               SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  Location loc = getLoc();
  Value zero = buildSplatLike(b, loc, getOperand(), 0.0);
  Value positive = buildCompare(b, loc, CmpPredicate::gt, getOperand(), zero);
  out[0] = buildSelect(b, loc, positive, g, zero);
  return success();
}

LogicalResult SigmoidOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                  SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // d sigmoid = y * (1 - y)
  Location loc = getLoc();
  Value y = getResult();
  Value one = buildSplatLike(b, loc, y, 1.0);
  Value slope = MulOp::create(b, loc, y, SubOp::create(b, loc, one, y));
  out[0] = MulOp::create(b, loc, g, slope);
  return success();
}

LogicalResult TanhOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                               SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // d tanh = 1 - y^2
  Location loc = getLoc();
  Value y = getResult();
  Value one = buildSplatLike(b, loc, y, 1.0);
  Value slope = SubOp::create(b, loc, one, MulOp::create(b, loc, y, y));
  out[0] = MulOp::create(b, loc, g, slope);
  return success();
}

LogicalResult ExpOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = MulOp::create(b, getLoc(), g, getResult());
  return success();
}

LogicalResult LogOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = DivOp::create(b, getLoc(), g, getOperand());
  return success();
}

LogicalResult SqrtOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                               SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // d sqrt(x) = 1 / (2 sqrt(x))
  Location loc = getLoc();
  Value twiceY = AddOp::create(b, loc, getResult(), getResult());
  out[0] = DivOp::create(b, loc, g, twiceY);
  return success();
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = out[1] = g;
  return success();
}

LogicalResult SubOp::buildVjp(OpBuilder &b, ValueRange cts,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  out[0] = g;
  if (needed[1])
    out[1] = NegOp::create(b, getLoc(), g);
  return success();
}

LogicalResult MulOp::buildVjp(OpBuilder &b, ValueRange cts,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  if (needed[0])
    out[0] = MulOp::create(b, getLoc(), g, getRhs());
  if (needed[1])
    out[1] = MulOp::create(b, getLoc(), g, getLhs());
  return success();
}

LogicalResult DivOp::buildVjp(OpBuilder &b, ValueRange cts,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  Location loc = getLoc();
  Value gOverRhs = DivOp::create(b, loc, g, getRhs());
  if (needed[0])
    out[0] = gOverRhs;
  // d(a/b)/db = -(a/b)/b
  if (needed[1])
    out[1] = NegOp::create(
        b, loc, MulOp::create(b, loc, gOverRhs, getResult()));
  return success();
}

LogicalResult PowOp::buildVjp(OpBuilder &b, ValueRange cts,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  Location loc = getLoc();
  Value base = getLhs(), exponent = getRhs();
  if (needed[0]) {
    // d(a^e)/da = e * a^(e-1)
    Value one = buildSplatLike(b, loc, exponent, 1.0);
    Value lowered = PowOp::create(b, loc, base,
                                  SubOp::create(b, loc, exponent, one));
    out[0] = MulOp::create(b, loc, g, MulOp::create(b, loc, exponent, lowered));
  }
  if (needed[1]) {
    // d(a^e)/de = log(a) * a^e
    Value slope = MulOp::create(b, loc, LogOp::create(b, loc, base), getResult());
    out[1] = MulOp::create(b, loc, g, slope);
  }
  return success();
}

LogicalResult SelectOp::buildVjp(OpBuilder &b, ValueRange cts,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  Location loc = getLoc();
  Value zero = buildSplatLike(b, loc, g, 0.0);
  if (needed[1])
    out[1] = SelectOp::create(b, loc, getType(), getCondition(), g, zero);
  if (needed[2])
    out[2] = SelectOp::create(b, loc, getType(), getCondition(), zero, g);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::buildVjp(OpBuilder &b, ValueRange cts,
                                         ArrayRef<bool>,
                                         SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = buildUnbroadcast(b, getLoc(), g, getOperand().getType(),
                              getDims());
  return success();
}

LogicalResult ReshapeOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                  SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = buildReshape(b, getLoc(), g, getOperand().getType().getShape());
  return success();
}

LogicalResult TransposeOp::buildVjp(OpBuilder &b, ValueRange cts,
                                    ArrayRef<bool>,
                                    SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  out[0] = TransposeOp::create(b, getLoc(), getOperand().getType(), g, inverse);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::buildVjp(OpBuilder &b, ValueRange cts,
                                    ArrayRef<bool>,
                                    SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  RankedTensorType operandType = getOperand().getType();
  SmallVector<int64_t> keptShape(operandType.getShape());
  for (int64_t axis : getAxes())
    keptShape[axis] = 1;
  Value kept = buildReshape(b, getLoc(), g, keptShape);
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, operandType.getRank()));
  out[0] = BroadcastInDimOp::create(b, getLoc(), operandType, kept, dims);
  return success();
}

LogicalResult MatmulOp::buildVjp(OpBuilder &b, ValueRange cts,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  Location loc = getLoc();
  Value lhs = getLhs(), rhs = getRhs();
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  auto matmul = [&](Value x, Value y, bool tx, bool ty, Type type) -> Value {
    return MatmulOp::create(b, loc, type, x, y, tx, ty);
  };
  // With op(X) the (possibly transposed) operand and C = op(L) op(R):
  //   dop(L) = G op(R)^T and dop(R) = op(L)^T G, transposed back to storage.
  if (needed[0])
    out[0] = tl ? matmul(rhs, g, tr, true, lhs.getType())
                : matmul(g, rhs, false, !tr, lhs.getType());
  if (needed[1])
    out[1] = tr ? matmul(g, lhs, true, tl, rhs.getType())
                : matmul(lhs, g, !tl, false, rhs.getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Normalized exponentials and losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                  SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // dx = y * (g - sum(g * y))
  Location loc = getLoc();
  Value y = getResult();
  Value dot = buildSumBroadcastBack(b, loc, MulOp::create(b, loc, g, y),
                                    getAxis());
  out[0] = MulOp::create(b, loc, y, SubOp::create(b, loc, g, dot));
  return success();
}

LogicalResult LogSoftmaxOp::buildVjp(OpBuilder &b, ValueRange cts,
                                     ArrayRef<bool>,
                                     SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // dx = g - exp(y) * sum(g)
  Location loc = getLoc();
  Value sum = buildSumBroadcastBack(b, loc, g, getAxis());
  Value probs = ExpOp::create(b, loc, getResult());
  out[0] = SubOp::create(b, loc, g, MulOp::create(b, loc, probs, sum));
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::buildVjp(OpBuilder &b, ValueRange cts,
                                              ArrayRef<bool>,
                                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = SoftmaxCrossEntropyGradOp::create(
        b, getLoc(), getLogits(), getLabels(), g, getIgnoreIndexAttr());
  return success();
}
