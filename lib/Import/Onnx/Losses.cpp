//===- Losses.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ----===//
//
// The losses PyTorch exports with a model (`torch.nn.functional.nll_loss`,
// `cross_entropy`), so that `--loss output:NAME` trains such a model. Both
// are built from differentiable lmc ops: the target class of every element
// is picked with a one-hot mask (lmc.cmp of the targets against the class
// indices), which also picks its weight.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;

namespace lmc::onnx_import {
namespace {

enum class Reduction { None, Sum, Mean };

FailureOr<Reduction> reductionAttr(NodeImporter &n) {
  std::string reduction = "mean";
  if (const onnx::AttributeProto *a = n.attr("reduction")) {
    if (a->type() != onnx::AttributeProto::STRING)
      return n.error() << "attribute 'reduction' must be a string";
    reduction = a->s();
  }
  if (reduction == "none")
    return Reduction::None;
  if (reduction == "sum")
    return Reduction::Sum;
  if (reduction == "mean")
    return Reduction::Mean;
  return n.error() << "reduction '" << reduction
                   << "' is not one of none, sum, mean";
}

/// The negative log-likelihood of `logProb` [N, C, d...] at the classes
/// `target` [N, d...] (ONNX NegativeLogLikelihoodLoss): per element
/// -logProb[n, target, d...] * weight[target], 0 where target equals
/// ignore_index; reduced to the sum, or to the weighted mean (divided by
/// the sum of the picked weights).
FailureOr<Value> buildNll(NodeImporter &n, Value logProb, unsigned targetInput,
                          unsigned weightInput) {
  FailureOr<Reduction> reduction = reductionAttr(n);
  const onnx::AttributeProto *ignoreAttr = n.attr("ignore_index");
  FailureOr<int64_t> ignoreIndex = n.intAttr("ignore_index", 0);
  FailureOr<Value> target = n.input(targetInput);
  if (failed(reduction) || failed(ignoreIndex) || failed(target))
    return failure();
  auto type = cast<RankedTensorType>(logProb.getType());
  auto targetType = cast<RankedTensorType>(target->getType());
  if (type.getRank() < 2)
    return n.error() << "input must be [N, C, d1, ...], got " << type;
  SmallVector<int64_t> perElement = {type.getDimSize(0)};
  llvm::append_range(perElement, type.getShape().drop_front(2));
  if (!targetType.getElementType().isInteger(64) &&
      !targetType.getElementType().isInteger(32))
    return n.error() << "target must be int64 or int32, got " << targetType;
  if (targetType.getShape() != ArrayRef<int64_t>(perElement))
    return n.error() << "target is " << targetType
                     << " but the input " << type << " needs its shape [N, d...]";

  OpBuilder &b = n.b;
  Location loc = n.loc;
  Type elementType = type.getElementType();
  const int64_t classes = type.getDimSize(1);
  auto elementsType = RankedTensorType::get(perElement, elementType);
  auto boolType = [&](RankedTensorType like) {
    return RankedTensorType::get(like.getShape(), b.getI1Type());
  };

  // oneHot[n, c, d...] = (target[n, d...] == c)
  SmallVector<int64_t> notClassDims = {0};
  for (int64_t d = 2; d < type.getRank(); ++d)
    notClassDims.push_back(d);
  auto classIndexType =
      RankedTensorType::get({classes}, targetType.getElementType());
  SmallVector<APInt> indices;
  for (int64_t c = 0; c < classes; ++c)
    indices.push_back(
        APInt(targetType.getElementTypeBitWidth(), uint64_t(c), true));
  Value classIndex = arith::ConstantOp::create(
      b, loc, classIndexType, DenseElementsAttr::get(classIndexType, indices));
  auto targetsPerClassType =
      RankedTensorType::get(type.getShape(), targetType.getElementType());
  Value oneHot = CmpOp::create(
      b, loc, boolType(type), CmpPredicate::eq,
      BroadcastInDimOp::create(b, loc, targetsPerClassType, *target,
                               notClassDims),
      BroadcastInDimOp::create(b, loc, targetsPerClassType, classIndex,
                               ArrayRef<int64_t>{1}));
  // The value of `perClass` [N, C, d...] at every element's target class.
  auto pick = [&](Value perClass) -> Value {
    Value masked = SelectOp::create(b, loc, oneHot, perClass,
                                    buildSplat(b, loc, type, 0.0));
    return ReduceSumOp::create(b, loc, elementsType, masked,
                               ArrayRef<int64_t>{1}, /*keep_dims=*/false);
  };

  Value weight = buildSplat(b, loc, elementsType, 1.0);
  if (n.hasInput(weightInput)) {
    FailureOr<Value> classWeight = n.floatInput(weightInput);
    if (failed(classWeight))
      return failure();
    auto weightType = cast<RankedTensorType>(classWeight->getType());
    if (weightType != RankedTensorType::get({classes}, elementType))
      return n.error() << "weight must be " << elementType << "[" << classes
                       << "], got " << weightType;
    weight = pick(BroadcastInDimOp::create(b, loc, type, *classWeight,
                                           ArrayRef<int64_t>{1}));
  }
  if (ignoreAttr) {
    Value ignored = CmpOp::create(
        b, loc, boolType(targetType), CmpPredicate::eq, *target,
        buildSplat(b, loc, targetType, double(*ignoreIndex)));
    weight = SelectOp::create(b, loc, ignored,
                              buildSplat(b, loc, elementsType, 0.0), weight);
  }
  Value loss = NegOp::create(
      b, loc, MulOp::create(b, loc, pick(logProb), weight).getResult());
  if (*reduction == Reduction::None)
    return loss;

  auto scalarType = RankedTensorType::get({}, elementType);
  auto all = llvm::to_vector(llvm::seq<int64_t>(0, elementsType.getRank()));
  Value total =
      ReduceSumOp::create(b, loc, scalarType, loss, all, /*keep_dims=*/false);
  if (*reduction == Reduction::Sum)
    return total;
  Value weightSum =
      ReduceSumOp::create(b, loc, scalarType, weight, all, /*keep_dims=*/false);
  return DivOp::create(b, loc, total, weightSum).getResult();
}

LogicalResult importNegativeLogLikelihoodLoss(NodeImporter &n) {
  if (failed(n.checkArity(2, 3)) ||
      failed(n.checkAttributes({"reduction", "ignore_index"})))
    return failure();
  FailureOr<Value> logProb = n.floatInput(0);
  if (failed(logProb))
    return failure();
  FailureOr<Value> loss = buildNll(n, *logProb, 1, 2);
  if (failed(loss))
    return failure();
  return n.setResult(*loss);
}

/// NegativeLogLikelihoodLoss of log_softmax over the class axis; output 1
/// (optional) is that log_softmax.
LogicalResult importSoftmaxCrossEntropyLoss(NodeImporter &n) {
  if (n.numOutputs() > 2)
    return n.error() << "expected at most 2 outputs, got " << n.numOutputs();
  if (failed(n.checkArity(2, 3, n.numOutputs())) ||
      failed(n.checkAttributes({"reduction", "ignore_index"})))
    return failure();
  FailureOr<Value> scores = n.floatInput(0);
  if (failed(scores))
    return failure();
  if (cast<RankedTensorType>(scores->getType()).getRank() < 2)
    return n.error() << "scores must be [N, C, d1, ...], got "
                     << scores->getType();
  Value logProb = LogSoftmaxOp::create(n.b, n.loc, scores->getType(), *scores,
                                       /*axis=*/1);
  FailureOr<Value> loss = buildNll(n, logProb, 1, 2);
  if (failed(loss) || failed(n.setResult(*loss)))
    return failure();
  if (n.numOutputs() > 1)
    return n.setResult(logProb, 1);
  return success();
}

} // namespace

void registerLossOps(OpTable &table) {
  table["NegativeLogLikelihoodLoss"] = importNegativeLogLikelihoodLoss;
  table["SoftmaxCrossEntropyLoss"] = importSoftmaxCrossEntropyLoss;
}

} // namespace lmc::onnx_import
