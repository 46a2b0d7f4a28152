//===- OnnxNormalization.cpp - LayerNormalization, Dropout ----------------===//
//
// LayerNormalization is decomposed into lmc reductions and elementwise ops,
// so its gradient comes from theirs. Dropout is the identity in inference
// mode; training mode is rejected for now.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// Y = (X - mean) / sqrt(var + epsilon) * Scale + B over the dimensions from
/// `axis` on; the optional outputs Mean and InvStdDev keep the reduced
/// dimensions with size 1.
LogicalResult importLayerNormalization(NodeImporter &n) {
  if (n.opset < 17)
    return n.error() << "LayerNormalization is an opset 17 op";
  unsigned outputs = n.node.output_size();
  while (outputs > 1 && n.node.output(outputs - 1).empty())
    --outputs;
  if (outputs > 3)
    return n.error() << "expected at most 3 outputs, got " << outputs;
  if (failed(n.checkArity(2, 3, outputs)) ||
      failed(n.checkAttributes({"axis", "epsilon", "stash_type"})))
    return failure();
  FailureOr<int64_t> axisAttr = n.intAttr("axis", -1);
  FailureOr<float> epsilon = n.floatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> stash = n.intAttr("stash_type", 1);
  FailureOr<Value> x = n.floatInput(0);
  FailureOr<Value> scale = n.floatInput(1);
  if (failed(axisAttr) || failed(epsilon) || failed(stash) || failed(x) ||
      failed(scale))
    return failure();
  if (*stash != 1)
    return n.error() << "stash_type " << *stash
                     << " is not supported (only 1, float)";
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();

  OpBuilder &b = n.b;
  Location loc = n.loc;
  SmallVector<int64_t> axes, keptShape(type.getShape());
  int64_t count = 1;
  for (int64_t d = *axis; d < rank; ++d) {
    axes.push_back(d);
    count *= type.getDimSize(d);
    keptShape[d] = 1;
  }
  auto keptType = RankedTensorType::get(keptShape, type.getElementType());
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  auto expand = [&](Value kept) -> Value {
    return BroadcastInDimOp::create(b, loc, type, kept, dims);
  };
  auto meanOf = [&](Value v) -> Value {
    Value sum = ReduceSumOp::create(b, loc, keptType, v, axes,
                                    /*keep_dims=*/true);
    return MulOp::create(b, loc, sum,
                         buildSplat(b, loc, keptType, 1.0 / double(count)));
  };
  Value mean = meanOf(*x);
  Value centered = SubOp::create(b, loc, *x, expand(mean));
  Value variance = meanOf(MulOp::create(b, loc, centered, centered));
  Value stddev = SqrtOp::create(
      b, loc,
      AddOp::create(b, loc, variance, buildSplat(b, loc, keptType, *epsilon)));
  Value invStdDev =
      DivOp::create(b, loc, buildSplat(b, loc, keptType, 1.0), stddev);
  Value y = MulOp::create(b, loc, centered, expand(invStdDev));

  auto broadcastParam = [&](Value param, StringRef what) -> FailureOr<Value> {
    auto paramType = cast<RankedTensorType>(param.getType());
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(type.getShape(), paramType.getShape());
    if (failed(shape) || ArrayRef<int64_t>(*shape) != type.getShape())
      return n.error() << what << " " << paramType
                       << " does not broadcast to the input " << type;
    return buildNumpyBroadcast(b, loc, param, type.getShape());
  };
  FailureOr<Value> scaleFull = broadcastParam(*scale, "scale");
  if (failed(scaleFull))
    return failure();
  y = MulOp::create(b, loc, y, *scaleFull);
  if (n.hasInput(2)) {
    FailureOr<Value> bias = n.floatInput(2);
    if (failed(bias))
      return failure();
    FailureOr<Value> biasFull = broadcastParam(*bias, "bias");
    if (failed(biasFull))
      return failure();
    y = AddOp::create(b, loc, y, *biasFull);
  }
  if (failed(n.setResult(y, 0)))
    return failure();
  if (outputs > 1 && failed(n.setResult(mean, 1)))
    return failure();
  if (outputs > 2 && failed(n.setResult(invStdDev, 2)))
    return failure();
  return success();
}

/// Dropout in inference mode: the identity (and an all-true mask).
LogicalResult importDropout(NodeImporter &n) {
  unsigned outputs = n.node.output_size();
  while (outputs > 1 && n.node.output(outputs - 1).empty())
    --outputs;
  if (outputs > 2)
    return n.error() << "expected at most 2 outputs, got " << outputs;
  bool inputsForm = n.opset >= 12;
  SmallVector<StringRef> allowed;
  if (inputsForm)
    allowed = {"seed"};
  else
    allowed = {"ratio", "is_test"};
  if (failed(n.checkArity(1, inputsForm ? 3 : 1, outputs)) ||
      failed(n.checkAttributes(allowed)))
    return failure();
  if (inputsForm && n.hasInput(2)) {
    DenseElementsAttr training = n.constantInput(2);
    if (!training || training.getNumElements() != 1)
      return n.error() << "training_mode (input 2) must be a compile-time "
                          "constant";
    if (doubleValues(training).front() != 0)
      return n.error() << "training mode is not supported yet (export the "
                          "model in eval mode)";
  }
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  if (DenseElementsAttr constant = n.constantInput(0)) {
    if (failed(n.setConstantResult(constant)))
      return failure();
  } else {
    FailureOr<Value> operand = n.input(0);
    if (failed(operand) || failed(n.setResult(*operand)))
      return failure();
  }
  if (outputs == 2) {
    auto maskType = RankedTensorType::get(type->getShape(), n.b.getI1Type());
    return n.setConstantResult(DenseElementsAttr::get(maskType, true), 1);
  }
  return success();
}

} // namespace

void registerNormalizationOps(OpTable &table) {
  table["LayerNormalization"] = importLayerNormalization;
  table["Dropout"] = importDropout;
}

} // namespace lmc::onnx_import
