//===- LmcVjpsExtra.cpp - VJPs of the extremum, slicing and gather ops ----===//
//
// Like LmcVjps.cpp: each VJP is written in lmc ops; `g` is the result
// cotangent.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace lmc;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AbsOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // d|x| = sign(x), 0 at 0.
  Location loc = getLoc();
  Value x = getOperand();
  Value zero = buildSplatLike(b, loc, x, 0.0);
  Value negated = buildSelect(b, loc, buildCompare(b, loc, CmpPredicate::lt, x, zero),
                         NegOp::create(b, loc, g), zero);
  out[0] = buildSelect(b, loc, buildCompare(b, loc, CmpPredicate::gt, x, zero), g, negated);
  return success();
}

LogicalResult ErfOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // d erf(x) = 2 / sqrt(pi) * exp(-x^2)
  Location loc = getLoc();
  Value x = getOperand();
  Value gauss = ExpOp::create(b, loc, NegOp::create(b, loc,
                                                    MulOp::create(b, loc, x, x)));
  Value scale = buildSplatLike(b, loc, x, 2.0 / std::sqrt(M_PI));
  out[0] = MulOp::create(b, loc, g, MulOp::create(b, loc, scale, gauss));
  return success();
}

LogicalResult SinOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = MulOp::create(b, getLoc(), g, CosOp::create(b, getLoc(), getOperand()));
  return success();
}

LogicalResult CosOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out)) {
    Value sin = SinOp::create(b, getLoc(), getOperand());
    out[0] = NegOp::create(b, getLoc(), MulOp::create(b, getLoc(), g, sin));
  }
  return success();
}

LogicalResult AtanOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                               SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  // d atan(x) = 1 / (1 + x^2)
  Location loc = getLoc();
  Value x = getOperand();
  Value denominator = AddOp::create(b, loc, buildSplatLike(b, loc, x, 1.0),
                                    MulOp::create(b, loc, x, x));
  out[0] = DivOp::create(b, loc, g, denominator);
  return success();
}

/// Rounding: piecewise constant, so the cotangent does not pass.
static LogicalResult buildZeroVjp(OpBuilder &b, Operation *op, ValueRange cts,
                                  SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(op, cts, out))
    out[0] = buildSplatLike(b, op->getLoc(), g, 0.0);
  return success();
}

LogicalResult FloorOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                SmallVectorImpl<Value> &out) {
  return buildZeroVjp(b, *this, cts, out);
}

LogicalResult CeilOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                               SmallVectorImpl<Value> &out) {
  return buildZeroVjp(b, *this, cts, out);
}

LogicalResult RoundOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                SmallVectorImpl<Value> &out) {
  return buildZeroVjp(b, *this, cts, out);
}

/// Max/min: the cotangent goes to the winning operand, half to each on ties.
static void buildExtremumVjp(OpBuilder &b, Location loc, CmpPredicate wins,
                             Value lhs, Value rhs, Value g,
                             ArrayRef<bool> needed,
                             SmallVectorImpl<Value> &out) {
  Value zero = buildSplatLike(b, loc, g, 0.0);
  Value half = MulOp::create(b, loc, g, buildSplatLike(b, loc, g, 0.5));
  Value tie = buildCompare(b, loc, CmpPredicate::eq, lhs, rhs);
  Value tieShare = buildSelect(b, loc, tie, half, zero);
  if (needed[0])
    out[0] = buildSelect(b, loc, buildCompare(b, loc, wins, lhs, rhs), g, tieShare);
  if (needed[1])
    out[1] = buildSelect(b, loc, buildCompare(b, loc, wins, rhs, lhs), g, tieShare);
}

LogicalResult MaxOp::buildVjp(OpBuilder &b, ValueRange cts,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    buildExtremumVjp(b, getLoc(), CmpPredicate::gt, getLhs(), getRhs(), g, needed, out);
  return success();
}

LogicalResult MinOp::buildVjp(OpBuilder &b, ValueRange cts,
                              ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    buildExtremumVjp(b, getLoc(), CmpPredicate::lt, getLhs(), getRhs(), g, needed, out);
  return success();
}

LogicalResult ModeSelectOp::buildVjp(OpBuilder &, ValueRange cts,
                                     ArrayRef<bool>,
                                     SmallVectorImpl<Value> &out) {
  // Differentiation is of the training step.
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = g;
  return success();
}

LogicalResult ConvertOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                  SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  auto operandType = getOperand().getType();
  // Integer and boolean operands get no gradient.
  if (!g || !isa<FloatType>(operandType.getElementType()))
    return success();
  out[0] = ConvertOp::create(b, getLoc(), operandType, g);
  return success();
}

//===----------------------------------------------------------------------===//
// Concatenation and slicing
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::buildVjp(OpBuilder &b, ValueRange cts,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  int64_t rank = getType().getRank(), axis = getAxis(), offset = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (needed[i]) {
      SmallVector<int64_t> start(rank, 0), stride(rank, 1);
      start[axis] = offset;
      out[i] = SliceOp::create(b, getLoc(), type, g, start, stride);
    }
    offset += type.getDimSize(axis);
  }
  return success();
}

LogicalResult SliceOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = SliceGradOp::create(b, getLoc(), getOperand().getType(), g,
                                 getStart(), getStride());
  return success();
}

LogicalResult SliceGradOp::buildVjp(OpBuilder &b, ValueRange cts,
                                    ArrayRef<bool>,
                                    SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = SliceOp::create(b, getLoc(), getSource().getType(), g,
                             getStart(), getStride());
  return success();
}

//===----------------------------------------------------------------------===//
// Max / min reductions
//===----------------------------------------------------------------------===//

/// Routes `g` to the positions of `x` equal to the reduced value `y`,
/// splitting it evenly among ties.
static Value buildReduceExtremumVjp(OpBuilder &b, Location loc, Value x,
                                    Value y, Value g, ArrayRef<int64_t> axes) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t axis : axes)
    keptShape[axis] = 1;
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  auto expand = [&](Value v) -> Value {
    return BroadcastInDimOp::create(b, loc, type,
                                    buildReshape(b, loc, v, keptShape), dims);
  };
  Value zero = buildSplatLike(b, loc, x, 0.0);
  Value one = buildSplatLike(b, loc, x, 1.0);
  Value hit = buildCompare(b, loc, CmpPredicate::eq, x, expand(y));
  Value indicator = buildSelect(b, loc, hit, one, zero);
  auto keptType = RankedTensorType::get(keptShape, type.getElementType());
  Value count = ReduceSumOp::create(b, loc, keptType, indicator, axes,
                                    /*keep_dims=*/true);
  Value share = DivOp::create(b, loc, buildReshape(b, loc, g, keptShape),
                              count);
  return buildSelect(b, loc, hit,
                BroadcastInDimOp::create(b, loc, type, share, dims), zero);
}

LogicalResult ReduceMaxOp::buildVjp(OpBuilder &b, ValueRange cts,
                                    ArrayRef<bool>,
                                    SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = buildReduceExtremumVjp(b, getLoc(), getOperand(), getResult(), g,
                                    getAxes());
  return success();
}

LogicalResult ReduceMinOp::buildVjp(OpBuilder &b, ValueRange cts,
                                    ArrayRef<bool>,
                                    SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = buildReduceExtremumVjp(b, getLoc(), getOperand(), getResult(), g,
                                    getAxes());
  return success();
}

//===----------------------------------------------------------------------===//
// Gather and scatter-add
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::buildVjp(OpBuilder &b, ValueRange cts,
                                 ArrayRef<bool> needed,
                                 SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g || !needed[0])
    return success();
  auto type = cast<RankedTensorType>(getOperand().getType());
  Value grad = ScatterAddOp::create(b, getLoc(), type, g, getIndices(),
                                    getAxis());
  if (std::optional<int64_t> padding = getPaddingIndex()) {
    // 1 on every slice but the padding one, broadcast along `axis`.
    int64_t axis = getAxis();
    int64_t size = type.getDimSize(axis);
    auto maskType = RankedTensorType::get({size}, type.getElementType());
    Attribute one = b.getFloatAttr(type.getElementType(), 1.0);
    Attribute zero = b.getFloatAttr(type.getElementType(), 0.0);
    SmallVector<Attribute> values(size, one);
    values[*padding] = zero;
    Value mask = arith::ConstantOp::create(
        b, getLoc(), DenseElementsAttr::get(maskType, values));
    Value broadcast = BroadcastInDimOp::create(
        b, getLoc(), type, mask, ArrayRef<int64_t>(axis));
    grad = MulOp::create(b, getLoc(), grad, broadcast);
  }
  out[0] = grad;
  return success();
}

LogicalResult ScatterAddOp::buildVjp(OpBuilder &b, ValueRange cts,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (g && needed[0])
    out[0] = GatherOp::create(b, getLoc(), getUpdates().getType(), g,
                              getIndices(), getAxis());
  return success();
}
