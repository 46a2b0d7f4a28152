//===- AttachLoss.cpp - make the forward function return a loss -----------===//

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace lmc {
#define GEN_PASS_DEF_LMCATTACHLOSS
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;
using namespace lmc;

namespace {

StringRef outputName(func::FuncOp func, unsigned i) {
  if (auto name = func.getResultAttrOfType<StringAttr>(i, attrs::kOutput))
    return name.getValue();
  return "";
}

bool hasInputNamed(func::FuncOp func, StringRef name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto n = func.getArgAttrOfType<StringAttr>(i, attrs::kInput))
      if (n.getValue() == name)
        return true;
  return false;
}

/// Appends a model input argument named `name`.
FailureOr<Value> addInput(func::FuncOp func, StringRef name, Type type) {
  if (hasInputNamed(func, name))
    return func.emitError("the model already has an input named '")
           << name << "'; the loss needs that name for its own input";
  OpBuilder b(func.getContext());
  unsigned index = func.getNumArguments();
  auto argAttrs = b.getDictionaryAttr(
      b.getNamedAttr(attrs::kInput, b.getStringAttr(name)));
  if (failed(func.insertArgument(index, type, argAttrs, func.getLoc())))
    return failure();
  return func.getArgument(index);
}

Value buildCrossEntropy(OpBuilder &b, Location loc, Value logits,
                        Value labels, int64_t ignoreIndex) {
  auto logitsType = cast<RankedTensorType>(logits.getType());
  int64_t classes = logitsType.getShape().back();
  int64_t rows = logitsType.getNumElements() / classes;
  Value flatLogits = buildReshape(b, loc, logits, {rows, classes});
  Value flatLabels = buildReshape(b, loc, labels, {rows});
  return SoftmaxCrossEntropyOp::create(
      b, loc, RankedTensorType::get({}, logitsType.getElementType()),
      flatLogits, flatLabels, b.getI64IntegerAttr(ignoreIndex));
}

Value buildMeanSquaredError(OpBuilder &b, Location loc, Value output,
                            Value targets) {
  auto type = cast<RankedTensorType>(output.getType());
  Value diff = SubOp::create(b, loc, output, targets);
  Value squared = MulOp::create(b, loc, diff, diff);
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  Value sum = squared;
  if (!axes.empty())
    sum = ReduceSumOp::create(b, loc, scalarType, squared, axes, false);
  Value scale = buildSplat(b, loc, scalarType, 1.0 / type.getNumElements());
  return MulOp::create(b, loc, sum, scale);
}

struct AttachLossPass : public lmc::impl::LmcAttachLossBase<AttachLossPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(attrs::kForward);
    if (!func) {
      module.emitError("expected a function named '") << attrs::kForward << "'";
      return signalPassFailure();
    }
    if (failed(attach(func)))
      return signalPassFailure();
    module->setAttr(attrs::kLoss, StringAttr::get(&getContext(), loss));
  }

  LogicalResult attach(func::FuncOp func) {
    if (func.getNumResults() == 0)
      return func.emitError("expected the model to have an output");
    auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    StringRef lossName = loss;
    bool fromOutput = lossName.consume_front("output:");
    StringRef wanted = fromOutput ? lossName : StringRef(output);

    unsigned index = 0;
    if (!wanted.empty()) {
      index = func.getNumResults();
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        if (outputName(func, i) == wanted)
          index = i;
      if (index == func.getNumResults())
        return func.emitError("the model has no output named '") << wanted << "'";
    }
    Value chosen = returnOp.getOperand(index);
    auto chosenType = dyn_cast<RankedTensorType>(chosen.getType());
    if (!chosenType || !isa<FloatType>(chosenType.getElementType()))
      return func.emitError("expected output '")
             << outputName(func, index) << "' to be a float tensor";

    OpBuilder b(returnOp);
    Location loc = returnOp.getLoc();
    Value lossValue;
    if (fromOutput) {
      if (chosenType.getNumElements() != 1)
        return func.emitError("loss output '")
               << wanted << "' must be a scalar, got " << chosenType;
      lossValue = buildReshape(b, loc, chosen, {});
    } else if (lossName == "cross_entropy") {
      if (chosenType.getRank() < 1)
        return func.emitError("cross_entropy needs logits with a class axis, got ")
               << chosenType;
      // Over one class the softmax is 1 whatever the logits: a loss of 0
      // and no gradient, every step (the default loss on a regression
      // model would train nothing without a word).
      if (chosenType.getShape().back() < 2)
        return func.emitError("cross_entropy over output '")
               << outputName(func, index) << "' (" << chosenType
               << ") has one class: its loss is 0 and trains nothing; pass "
                  "--loss mse for a regression output (or --loss "
                  "output:NAME for a loss the model computes)";
      auto labelsType = RankedTensorType::get(
          chosenType.getShape().drop_back(), b.getI64Type());
      FailureOr<Value> labels = addInput(func, "labels", labelsType);
      if (failed(labels))
        return failure();
      lossValue = buildCrossEntropy(b, loc, chosen, *labels, ignoreIndex);
    } else if (lossName == "mse") {
      FailureOr<Value> targets = addInput(func, "targets", chosenType);
      if (failed(targets))
        return failure();
      lossValue = buildMeanSquaredError(b, loc, chosen, *targets);
    } else {
      return func.emitError("unknown loss '")
             << loss << "'; expected cross_entropy, mse or output:NAME";
    }

    SmallVector<Value> results{lossValue};
    SmallVector<Attribute> resultAttrs{b.getDictionaryAttr(
        b.getNamedAttr(attrs::kOutput, b.getStringAttr("loss")))};
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (fromOutput && i == index)
        continue;
      results.push_back(returnOp.getOperand(i));
      resultAttrs.push_back(func.getResultAttrDict(i)
                                ? Attribute(func.getResultAttrDict(i))
                                : b.getDictionaryAttr({}));
    }
    returnOp->setOperands(results);
    func.setType(FunctionType::get(func.getContext(),
                                   func.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    func.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
