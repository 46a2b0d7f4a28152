//===- Normalization.cpp - Layer/BatchNormalization, Dropout --------------===//
//
// LayerNormalization and BatchNormalization are decomposed into lmc
// reductions and elementwise ops, so their gradients come from theirs.
// Dropout is the identity in inference mode; in training mode it masks with
// lmc.random_uniform of the step's random key.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "TorchExport.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// Y = (X - mean) / sqrt(var + epsilon) * Scale + B over the dimensions from
/// `axis` on; the optional outputs Mean and InvStdDev keep the reduced
/// dimensions with size 1.
LogicalResult importLayerNormalization(NodeImporter &n) {
  if (n.opset < 17)
    return n.error() << "LayerNormalization is an opset 17 op";
  unsigned outputs = n.numOutputs();
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

/// BatchNormalization over [N, C, ...]. Inference: the running statistics
/// (inputs 3 and 4) are used as constants (an initializer's initial value;
/// they are not trained). Training (`training_mode = 1` from opset 14; more
/// than one output before): batch statistics over every dimension but 1
/// (biased variance) in a training step, the running statistics in an
/// evaluation step (lmc.mode_select), and the running statistics updated
/// as `input * momentum + batch * (1 - momentum)` (the ONNX reference).
/// A dynamo export's node carries neither `training_mode` nor the extra
/// outputs: its FX record decides the mode, and the update follows
/// PyTorch (momentum from the record, the unbiased variance).
/// Running statistics that are initializers become buffers: the update is
/// carried to the next step and saved in checkpoints.
LogicalResult importBatchNormalization(NodeImporter &n) {
  if (n.opset < 7)
    return n.error() << "BatchNormalization before opset 7 is not supported";
  unsigned outputs = n.numOutputs();
  SmallVector<StringRef> allowed = {"epsilon", "momentum"};
  if (n.opset < 9)
    allowed.push_back("spatial");
  if (n.opset >= 14)
    allowed.push_back("training_mode");
  unsigned maxOutputs = n.opset >= 14 ? 3 : 5;
  if (outputs > maxOutputs)
    return n.error() << "expected at most " << maxOutputs << " outputs, got "
                     << outputs;
  if (failed(n.checkArity(5, 5, outputs)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<float> epsilon = n.floatAttr("epsilon", 1e-5f);
  FailureOr<float> momentum = n.floatAttr("momentum", 0.9f);
  FailureOr<int64_t> spatialAttr = n.intAttr("spatial", 1);
  FailureOr<int64_t> trainingMode = n.intAttr("training_mode", 0);
  FailureOr<Value> x = n.floatInput(0);
  if (failed(epsilon) || failed(momentum) || failed(spatialAttr) ||
      failed(trainingMode) || failed(x))
    return failure();
  if (*spatialAttr != 1)
    return n.error() << "spatial = " << *spatialAttr
                     << " is not supported (only 1)";
  bool training = n.opset >= 14 ? *trainingMode != 0 : outputs > 1;
  // A dynamo export drops `training_mode` and the running-statistics
  // outputs; its FX record says how PyTorch ran the node, and PyTorch
  // updates running_var with the unbiased batch variance.
  std::optional<TorchBatchNorm> torch = torchBatchNorm(n.node);
  if (torch) {
    training = torch->training;
    *momentum = static_cast<float>(1.0 - torch->momentum);
  }
  if (n.opset >= 14 && !training && outputs > 1)
    return n.error() << "the running_mean / running_var outputs need "
                        "training_mode = 1";
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  if (rank < 2)
    return n.error() << "expected an input of rank >= 2 ([N, C, ...]), got "
                     << type;
  Type element = type.getElementType();
  int64_t channels = type.getDimSize(1);
  auto channelType = RankedTensorType::get({channels}, element);
  OpBuilder &b = n.b;
  Location loc = n.loc;

  // Inputs 1..4 are [C] tensors of the input's element type; `asConstant`
  // takes an initializer's initial value (or a compile-time constant).
  auto channelInput = [&](unsigned i, bool asConstant) -> FailureOr<Value> {
    FailureOr<RankedTensorType> inputType = n.inputType(i);
    if (failed(inputType))
      return failure();
    if (*inputType != channelType)
      return n.error() << "expected input " << i << " of type " << channelType
                       << ", got " << *inputType;
    if (asConstant) {
      if (DenseElementsAttr value = n.fixedInput(i))
        return arith::ConstantOp::create(b, loc, value).getResult();
    }
    return n.floatInput(i);
  };
  FailureOr<Value> scale = channelInput(1, false);
  FailureOr<Value> bias = channelInput(2, false);
  FailureOr<Value> runningMean = channelInput(3, !training);
  FailureOr<Value> runningVar = channelInput(4, !training);
  if (failed(scale) || failed(bias) || failed(runningMean) ||
      failed(runningVar))
    return failure();

  if (!training)
    return n.setResult(buildBatchNormWithStatistics(
        b, loc, *x, *scale, *bias, *runningMean, *runningVar, *epsilon));
  BatchNormTraining norm = buildBatchNormTraining(
      b, loc, *x, *scale, *bias, *runningMean, *runningVar, *epsilon);
  Value mean = norm.mean, variance = norm.variance;
  if (failed(n.setResult(norm.y, 0)))
    return failure();
  auto splat = [&](double v) { return buildSplat(b, loc, channelType, v); };
  auto update = [&](Value running, Value batch) -> Value {
    return AddOp::create(b, loc, MulOp::create(b, loc, running,
                                               splat(*momentum)),
                         MulOp::create(b, loc, batch, splat(1.0 - *momentum)));
  };
  Value runningVarStatistic = variance;
  if (torch) {
    if (norm.count < 2)
      return n.error() << "PyTorch's training-mode BatchNorm needs more than "
                          "one value per channel, got "
                       << type;
    runningVarStatistic = MulOp::create(
        b, loc, variance,
        splat(double(norm.count) / double(norm.count - 1)));
  }
  Value newMean = update(*runningMean, mean);
  Value newVar = update(*runningVar, runningVarStatistic);
  for (auto [input, updated] : {std::make_pair(3u, newMean),
                                std::make_pair(4u, newVar)})
    if (n.paramInitInput(input) && failed(n.carryBuffer(input, updated)))
      return failure();
  if (outputs > 1 && failed(n.setResult(newMean, 1)))
    return failure();
  if (outputs > 2 && failed(n.setResult(newVar, 2)))
    return failure();
  if (outputs > 3 && failed(n.setResult(mean, 3)))
    return failure();
  if (outputs > 4 && failed(n.setResult(variance, 4)))
    return failure();
  return success();
}

LogicalResult importTrainingDropout(NodeImporter &n, RankedTensorType type,
                                   unsigned outputs) {
  double ratio = 0.5;
  if (n.hasInput(1)) {
    // A constant, or an initializer's value (a fixed hyperparameter).
    DenseElementsAttr given = n.fixedInput(1);
    if (!given || given.getNumElements() != 1 ||
        !isa<FloatType>(given.getElementType()))
      return n.error() << "ratio (input 1) must be a compile-time float "
                          "scalar";
    ratio = doubleValues(given).front();
  }
  if (!(ratio >= 0 && ratio < 1))
    return n.error() << "ratio must be in [0, 1), got " << ratio;
  FailureOr<Value> x = n.floatInput(0);
  if (failed(x))
    return failure();
  OpBuilder &b = n.b;
  Location loc = n.loc;
  auto maskType = RankedTensorType::get(type.getShape(), b.getI1Type());
  Value allKept = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(maskType, true));
  Value y = *x, kept = allKept;
  if (ratio > 0) {
    Value key = n.rngKey();
    if (!key)
      return n.error() << "cannot add the random key argument";
    FailureOr<int64_t> seed =
        n.intAttr("seed", int64_t(llvm::xxh3_64bits(n.name)));
    if (failed(seed))
      return failure();
    std::tie(y, kept) = buildTrainingDropout(b, loc, *x, ratio, key, *seed);
  }
  if (failed(n.setResult(ModeSelectOp::create(b, loc, y, *x), 0)))
    return failure();
  if (outputs == 2)
    return n.setResult(ModeSelectOp::create(b, loc, kept, allKept), 1);
  return success();
}

/// RandomUniformLike: numbers in [low, high) of the input's shape (and its
/// type, or `dtype`), from lmc.random_uniform of the step's random key on
/// the stream of `seed` (else a hash of the node's name), a fresh draw
/// every micro-batch as Dropout's. The dynamo exporter writes PyTorch's
/// `bernoulli` (dropout, stochastic depth) this way; the importer evaluates
/// those masks at their expectation (evaluateAtExpectation).
LogicalResult importRandomUniformLike(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) ||
      failed(n.checkAttributes({"dtype", "high", "low", "seed"})))
    return failure();
  FailureOr<RankedTensorType> like = n.inputType(0);
  FailureOr<float> high = n.floatAttr("high", 1.0f);
  FailureOr<float> low = n.floatAttr("low", 0.0f);
  FailureOr<float> seed =
      n.floatAttr("seed", float(llvm::xxh3_64bits(n.name) % (1u << 24)));
  if (failed(like) || failed(high) || failed(low) || failed(seed))
    return failure();
  Type element = like->getElementType();
  if (n.attr("dtype")) {
    FailureOr<int64_t> dtype = n.intAttr("dtype", 0);
    if (failed(dtype))
      return failure();
    element = convertElementType(n.b.getContext(), int32_t(*dtype));
  }
  if (!element || !(element.isF32() || element.isF64()))
    return n.error() << "random numbers of float32 or float64 only, got "
                     << (element ? element : like->getElementType());
  Value key = n.rngKey();
  if (!key)
    return n.error() << "cannot add the random key argument";
  auto type = RankedTensorType::get(like->getShape(), element);
  Value u = RandomUniformOp::create(n.b, n.loc, type, key, int64_t(*seed));
  if (*low != 0.0f || *high != 1.0f)
    u = AddOp::create(
        n.b, n.loc,
        MulOp::create(n.b, n.loc, u, buildSplat(n.b, n.loc, type, *high - *low)),
        buildSplat(n.b, n.loc, type, *low));
  return n.setResult(u);
}

/// Dropout. Inference (no or a false training_mode input; every opset
/// before 12): the identity and an all-true mask. Training mode: each
/// element is kept with probability 1 - ratio and scaled by 1 / (1 - ratio),
/// as torch.nn.functional.dropout, from lmc.random_uniform of the step's
/// random key (a new one every micro-batch) on the stream of the `seed`
/// attribute, else of a hash of the node's name; an evaluation step is the
/// identity (lmc.mode_select).
LogicalResult importDropout(NodeImporter &n) {
  unsigned outputs = n.numOutputs();
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
  bool training = false;
  if (inputsForm && n.hasInput(2)) {
    DenseElementsAttr mode = n.constantInput(2);
    if (!mode || mode.getNumElements() != 1)
      return n.error() << "training_mode (input 2) must be a compile-time "
                          "constant";
    training = doubleValues(mode).front() != 0;
  }
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  if (training)
    return importTrainingDropout(n, *type, outputs);
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
  table["BatchNormalization"] = importBatchNormalization;
  table["LayerNormalization"] = importLayerNormalization;
  table["Dropout"] = importDropout;
  table["RandomUniformLike"] = importRandomUniformLike;
}

} // namespace lmc::onnx_import
