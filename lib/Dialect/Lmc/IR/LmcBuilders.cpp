//===- LmcBuilders.cpp - helpers that build common lmc op sequences -------===//

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace lmc {

Value buildSplat(OpBuilder &b, Location loc, RankedTensorType type,
                 double value) {
  Type elementType = type.getElementType();
  TypedAttr scalar;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    scalar = b.getFloatAttr(floatType, value);
  else
    scalar = b.getIntegerAttr(elementType, static_cast<int64_t>(value));
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, scalar));
}

Value buildSplatLike(OpBuilder &b, Location loc, Value like, double value) {
  return buildSplat(b, loc, tensorType(like), value);
}

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    shape[i] = l == 1 ? r : l;
  }
  return shape;
}

Value buildNumpyBroadcast(OpBuilder &b, Location loc, Value value,
                          ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(value);
  if (type.getShape() == shape)
    return value;
  int64_t offset = static_cast<int64_t>(shape.size()) - type.getRank();
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getRank(); ++i)
    dims.push_back(i + offset);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return BroadcastInDimOp::create(b, loc, resultType, value, dims);
}

Value buildReshape(OpBuilder &b, Location loc, Value value,
                   ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(value);
  if (type.getShape() == shape)
    return value;
  return ReshapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value);
}

Value buildUnbroadcast(OpBuilder &b, Location loc, Value value,
                       RankedTensorType type, ArrayRef<int64_t> dims) {
  RankedTensorType valueType = tensorType(value);
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < valueType.getRank(); ++d) {
    const int64_t *it = llvm::find(dims, d);
    if (it == dims.end()) {
      axes.push_back(d);
      continue;
    }
    int64_t operandDim = it - dims.begin();
    if (type.getDimSize(operandDim) == 1 && valueType.getDimSize(d) != 1)
      axes.push_back(d);
  }
  Value summed = value;
  if (!axes.empty()) {
    SmallVector<int64_t> keptShape;
    for (int64_t d = 0; d < valueType.getRank(); ++d)
      if (!llvm::is_contained(axes, d))
        keptShape.push_back(valueType.getDimSize(d));
    summed = ReduceSumOp::create(
        b, loc, RankedTensorType::get(keptShape, valueType.getElementType()),
        value, axes, /*keep_dims=*/false);
  }
  return buildReshape(b, loc, summed, type.getShape());
}

Value buildBroadcastScalar(OpBuilder &b, Location loc, Value scalar,
                           Value like) {
  RankedTensorType likeType = tensorType(like);
  if (likeType.getRank() == 0)
    return scalar;
  return BroadcastInDimOp::create(b, loc, likeType, scalar,
                                  ArrayRef<int64_t>{});
}

Value buildSumBroadcastBack(OpBuilder &b, Location loc, Value value,
                            int64_t axis) {
  RankedTensorType type = tensorType(value);
  SmallVector<int64_t> keptShape(type.getShape());
  keptShape[axis] = 1;
  Value sum = ReduceSumOp::create(
      b, loc, RankedTensorType::get(keptShape, type.getElementType()), value,
      ArrayRef<int64_t>{axis}, /*keep_dims=*/true);
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return BroadcastInDimOp::create(b, loc, type, sum, dims);
}

Value buildCompare(OpBuilder &b, Location loc, CmpPredicate predicate,
                   Value lhs, Value rhs) {
  auto maskType =
      RankedTensorType::get(tensorType(lhs).getShape(), b.getI1Type());
  return CmpOp::create(b, loc, maskType, predicate, lhs, rhs);
}

Value buildSelect(OpBuilder &b, Location loc, Value condition, Value onTrue,
                  Value onFalse) {
  return SelectOp::create(b, loc, onTrue.getType(), condition, onTrue,
                          onFalse);
}

std::pair<Value, Value> buildTrainingDropout(OpBuilder &b, Location loc,
                                             Value x, double ratio, Value key,
                                             int64_t stream) {
  RankedTensorType type = tensorType(x);
  auto uniformType = RankedTensorType::get(type.getShape(), b.getF32Type());
  Value uniform = RandomUniformOp::create(b, loc, uniformType, key, stream);
  Value kept = buildCompare(b, loc, CmpPredicate::ge, uniform,
                            buildSplat(b, loc, uniformType, ratio));
  Value scaled =
      MulOp::create(b, loc, x, buildSplat(b, loc, type, 1.0 / (1.0 - ratio)));
  return {buildSelect(b, loc, kept, scaled, buildSplat(b, loc, type, 0.0)),
          kept};
}

/// `channelValue` ([C]) broadcast along dimension 1 of `type` ([N, C, ...]).
static Value broadcastChannels(OpBuilder &b, Location loc, Value channelValue,
                               RankedTensorType type) {
  SmallVector<int64_t> kept(type.getRank(), 1);
  kept[1] = type.getDimSize(1);
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return BroadcastInDimOp::create(b, loc, type,
                                  buildReshape(b, loc, channelValue, kept), dims);
}

Value buildBatchNormWithStatistics(OpBuilder &b, Location loc, Value x,
                                   Value scale, Value bias, Value mean,
                                   Value variance, double epsilon) {
  RankedTensorType type = tensorType(x);
  RankedTensorType channelType = tensorType(scale);
  Value a = DivOp::create(
      b, loc, scale,
      SqrtOp::create(b, loc,
                     AddOp::create(b, loc, variance,
                                   buildSplat(b, loc, channelType, epsilon))));
  Value shift = SubOp::create(b, loc, bias, MulOp::create(b, loc, mean, a));
  return AddOp::create(
      b, loc, MulOp::create(b, loc, x, broadcastChannels(b, loc, a, type)),
      broadcastChannels(b, loc, shift, type));
}

BatchNormTraining buildBatchNormTraining(OpBuilder &b, Location loc, Value x,
                                         Value scale, Value bias,
                                         Value runningMean,
                                         Value runningVariance,
                                         double epsilon) {
  RankedTensorType type = tensorType(x);
  RankedTensorType channelType = tensorType(scale);
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != 1) {
      axes.push_back(d);
      count *= type.getDimSize(d);
    }
  auto meanOf = [&](Value v) -> Value {
    Value sum = ReduceSumOp::create(b, loc, channelType, v, axes,
                                    /*keep_dims=*/false);
    return MulOp::create(b, loc, sum,
                         buildSplat(b, loc, channelType, 1.0 / double(count)));
  };
  Value mean = meanOf(x);
  Value centered =
      SubOp::create(b, loc, x, broadcastChannels(b, loc, mean, type));
  Value variance = meanOf(MulOp::create(b, loc, centered, centered));
  Value a = DivOp::create(
      b, loc, scale,
      SqrtOp::create(b, loc,
                     AddOp::create(b, loc, variance,
                                   buildSplat(b, loc, channelType, epsilon))));
  Value yTrain = AddOp::create(
      b, loc, MulOp::create(b, loc, centered, broadcastChannels(b, loc, a, type)),
      broadcastChannels(b, loc, bias, type));
  Value yEval = buildBatchNormWithStatistics(b, loc, x, scale, bias, runningMean,
                                             runningVariance, epsilon);
  return {ModeSelectOp::create(b, loc, yTrain, yEval), mean, variance, count};
}

Value takeSingleCotangent(Operation *op, ValueRange resultCotangents,
                          SmallVectorImpl<Value> &operandCotangents) {
  operandCotangents.assign(op->getNumOperands(), Value());
  return resultCotangents.empty() ? Value() : resultCotangents.front();
}

} // namespace lmc
