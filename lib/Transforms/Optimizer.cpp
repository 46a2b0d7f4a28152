//===- Optimizer.cpp - build the train_step and eval_step entry points ----===//
//
// The update formulas follow torch.optim (SGD, SGD with momentum, Adam,
// AdamW; single-tensor, non-fused code path) operation by operation, so that
// lmc's first steps agree with PyTorch's to float rounding.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Transforms/Passes.h"
#include "lmc/runtime/optimizers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <limits>

namespace lmc {
#define GEN_PASS_DEF_LMCOPTIMIZER
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;
using namespace lmc;

namespace {

/// One entry-point argument or result: its type and its descriptor tags.
struct Slot {
  Type type;
  attrs::Role role;
  std::string name;
  Attribute init; // parameters only
};

DictionaryAttr slotAttrs(Builder &b, const Slot &slot) {
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr(attrs::kRole, attrs::roleAttr(b.getContext(), slot.role)),
      b.getNamedAttr(attrs::kName, b.getStringAttr(slot.name))};
  if (slot.init)
    attrs.push_back(b.getNamedAttr(attrs::kInit, slot.init));
  return b.getDictionaryAttr(attrs);
}

/// Creates `@name(args) -> results` with the slots' tags and an entry block.
func::FuncOp createEntryPoint(ModuleOp module, StringRef name,
                              ArrayRef<Slot> args, ArrayRef<Slot> results) {
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<Attribute> argAttrs, resultAttrs;
  for (const Slot &s : args) {
    argTypes.push_back(s.type);
    argAttrs.push_back(slotAttrs(b, s));
  }
  for (const Slot &s : results) {
    resultTypes.push_back(s.type);
    resultAttrs.push_back(slotAttrs(b, s));
  }
  auto func = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  func.addEntryBlock();
  return func;
}

/// The state slots each optimizer keeps per parameter (PyTorch's names).
SmallVector<StringRef> stateSlots(Optimizer optimizer) {
  if (optimizer == Optimizer::Momentum)
    return {"momentum_buffer"};
  if (isAdam(optimizer))
    return {"exp_avg", "exp_avg_sq"};
  return {};
}

/// The runtime-computed scalars, in argument order; `max_grad_norm` is last.
SmallVector<StringRef> hyperNames(Optimizer optimizer) {
  if (isAdam(optimizer))
    return {"lr", "adam_step_size", "adam_bc2_sqrt", "max_grad_norm"};
  return {"lr", "max_grad_norm"};
}

/// Dynamic loss scaling (torch.amp.GradScaler's defaults): the scale starts
/// at 2^16, halves on a step with a non-finite gradient (whose update is
/// skipped) and doubles after `interval` clean steps in a row.
constexpr double kInitialLossScale = 65536.0;
constexpr llvm::StringLiteral kLossScaleState = "loss_scaler.scale";
constexpr llvm::StringLiteral kGrowthTrackerState = "loss_scaler.growth_tracker";

/// torch.nn.utils.clip_grad_norm_'s factor for the global norm
/// `totalNorm`: min(1, max_norm / (norm + 1e-6)), and 1 when max_norm is 0.
Value clipCoefficient(OpBuilder &b, Location loc, Value totalNorm,
                      Value maxNorm) {
  Value zero = buildSplatLike(b, loc, maxNorm, 0.0);
  Value one = buildSplatLike(b, loc, maxNorm, 1.0);
  Value tiny = buildSplatLike(b, loc, maxNorm, 1e-6);
  Value ratio = DivOp::create(b, loc, maxNorm,
                              AddOp::create(b, loc, totalNorm, tiny));
  Value below = buildCompare(b, loc, CmpPredicate::lt, ratio, one);
  Value clamped = buildSelect(b, loc, below, ratio, one);
  Value enabled = buildCompare(b, loc, CmpPredicate::gt, maxNorm, zero);
  return buildSelect(b, loc, enabled, clamped, one);
}

/// Multiplies every gradient by the scalar `factor`; the ops of gradient k
/// at `locs[k]` when given (one per gradient), else at `loc`.
void scaleGradients(OpBuilder &b, Location loc, SmallVectorImpl<Value> &grads,
                    Value factor, ArrayRef<Location> locs = {}) {
  for (auto [k, g] : llvm::enumerate(grads)) {
    Location at = locs.empty() ? loc : locs[k];
    g = MulOp::create(b, at, g, buildBroadcastScalar(b, at, factor, g));
  }
}

/// torch.nn.utils.clip_grad_norm_: the global norm is the norm of the
/// per-parameter norms. Returns the norm before clipping and replaces
/// `grads` by the clipped ones; gradient k's ops are at `gradLocs[k]`.
Value clipGradients(OpBuilder &b, Location loc, SmallVectorImpl<Value> &grads,
                    Value maxNorm, ArrayRef<Location> gradLocs) {
  Value sumOfSquares = buildSplatLike(b, loc, maxNorm, 0.0);
  auto scalarType = cast<RankedTensorType>(maxNorm.getType());
  for (auto [g, at] : llvm::zip_equal(grads, gradLocs)) {
    auto type = cast<RankedTensorType>(g.getType());
    Value squares = MulOp::create(b, at, g, g);
    auto axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    Value sum = axes.empty() ? squares
                             : ReduceSumOp::create(b, at, scalarType, squares,
                                                   axes, false)
                                   .getResult();
    Value norm = SqrtOp::create(b, at, sum);
    Value normSquared = MulOp::create(b, at, norm, norm);
    sumOfSquares = AddOp::create(b, at, sumOfSquares, normSquared);
  }
  Value totalNorm = SqrtOp::create(b, loc, sumOfSquares);
  scaleGradients(b, loc, grads, clipCoefficient(b, loc, totalNorm, maxNorm),
                 gradLocs);
  return totalNorm;
}

struct OptimizerPass : public lmc::impl::LmcOptimizerBase<OptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chunkElements < 1) {
      module.emitError("chunk-elements must be >= 1, got ")
          << int64_t(chunkElements);
      return signalPassFailure();
    }
    auto forward = module.lookupSymbol<func::FuncOp>(attrs::kForward);
    auto grad = module.lookupSymbol<func::FuncOp>(attrs::kForwardGrad);
    if (!forward || !grad) {
      module.emitError("expected @forward and @forward_grad (run lmc-autodiff "
                       "first)");
      return signalPassFailure();
    }
    FailureOr<Slots> slots = collectSlots(grad);
    if (failed(slots))
      return signalPassFailure();
    buildGradStep(module, grad, *slots);
    func::FuncOp apply = buildApplyStep(module, *slots);
    buildTrainStep(module, grad, apply, *slots);
    if (!slots->lossScaling)
      buildChunkStep(module, *slots);
    resolveModeSelects(grad, /*training=*/true);
    func::FuncOp evalForward = forward.clone();
    evalForward.setName((attrs::kForward + "_eval").str());
    module.insert(std::next(Block::iterator(forward)), evalForward);
    resolveModeSelects(evalForward, /*training=*/false);
    buildEvalStep(module, evalForward);
    for (func::FuncOp f : {forward, grad, evalForward})
      f.setPrivate();
    recordHyperparameters(module);
  }

  void recordHyperparameters(ModuleOp module) {
    Builder b(module.getContext());
    module->setAttr(
        attrs::kOptimizer,
        b.getDictionaryAttr({
            b.getNamedAttr("name", b.getStringAttr(optimizerName(optimizer))),
            b.getNamedAttr("lr", b.getF64FloatAttr(lr)),
            b.getNamedAttr("beta1", b.getF64FloatAttr(beta1)),
            b.getNamedAttr("beta2", b.getF64FloatAttr(beta2)),
            b.getNamedAttr("eps", b.getF64FloatAttr(eps)),
            b.getNamedAttr("weight_decay", b.getF64FloatAttr(weightDecay)),
            b.getNamedAttr("momentum", b.getF64FloatAttr(momentum)),
            b.getNamedAttr("clip_grad_norm", b.getF64FloatAttr(clipGradNorm)),
        }));
  }

  /// Replaces every lmc.mode_select in `func` by its operand for a training
  /// or an evaluation step.
  static void resolveModeSelects(func::FuncOp func, bool training) {
    func.walk([&](ModeSelectOp op) {
      op.replaceAllUsesWith(training ? op.getTrain() : op.getEval());
      op.erase();
    });
  }

  /// Forward arguments split by role, in signature order.
  struct Signature {
    SmallVector<unsigned> params, buffers, frozen, inputs;
    std::optional<unsigned> rngKey, lossScale;
  };

  static Signature classify(func::FuncOp func) {
    Signature sig;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      if (func.getArgAttr(i, attrs::kFrozen))
        sig.frozen.push_back(i);
      else if (func.getArgAttr(i, attrs::kParam))
        sig.params.push_back(i);
      else if (func.getArgAttr(i, attrs::kBuffer))
        sig.buffers.push_back(i);
      else if (func.getArgAttr(i, attrs::kRngKey))
        sig.rngKey = i;
      else if (func.getArgAttr(i, attrs::kLossScale))
        sig.lossScale = i;
      else
        sig.inputs.push_back(i);
    }
    return sig;
  }

  static std::string argName(func::FuncOp func, unsigned i) {
    for (StringRef key : {attrs::kParam, attrs::kBuffer, attrs::kInput})
      if (auto name = func.getArgAttrOfType<StringAttr>(i, key))
        return name.str();
    return ("arg" + Twine(i)).str();
  }

  /// The slots every entry point is assembled from, in signature order.
  /// Only the `init*` lists (train_step's arguments) carry initial values:
  /// every param and buffer, and with dynamic loss scaling the scale (the
  /// last two states are then the scaler's: scale, growth tracker).
  /// `hypers` are the optimizer's; `rngKey` (a hyper too, after them in
  /// train_step) is there when the forward draws random numbers.
  struct Slots {
    SmallVector<Slot> initParams, params, states, initStates, initBuffers,
        buffers, initFrozen, frozen, inputs, hypers, grads, rngKey;
    Slot loss, gradNorm;
    bool lossScaling = false;
  };

  FailureOr<Slots> collectSlots(func::FuncOp grad) {
    Signature sig = classify(grad);
    Builder builder(grad.getContext());
    Type f32Scalar = RankedTensorType::get({}, builder.getF32Type());
    Slots slots;
    for (unsigned i : sig.params) {
      auto type = cast<RankedTensorType>(grad.getArgumentTypes()[i]);
      if (!type.getElementType().isF32())
        return grad.emitError("parameter '")
               << argName(grad, i) << "' must be f32 to be trained, got "
               << type;
      slots.initParams.push_back({type, attrs::Role::Param, argName(grad, i),
                                  grad.getArgAttr(i, attrs::kInit)});
      slots.params.push_back(
          {type, attrs::Role::Param, argName(grad, i), nullptr});
      slots.grads.push_back(
          {type, attrs::Role::Grad, argName(grad, i), nullptr});
      for (StringRef slot : stateSlots(optimizer))
        slots.states.push_back({type, attrs::Role::State,
                                argName(grad, i) + "." + slot.str(), nullptr});
    }
    slots.initStates = slots.states;
    if (sig.lossScale) {
      slots.lossScaling = true;
      if (lossScaleGrowthInterval < 1)
        return grad.emitError("loss-scale-growth-interval must be >= 1, got ")
               << int64_t(lossScaleGrowthInterval);
      Attribute initialScale = DenseElementsAttr::get(
          cast<RankedTensorType>(f32Scalar), float(kInitialLossScale));
      for (StringRef name : {kLossScaleState, kGrowthTrackerState}) {
        slots.states.push_back(
            {f32Scalar, attrs::Role::State, name.str(), nullptr});
        slots.initStates.push_back(
            {f32Scalar, attrs::Role::State, name.str(),
             name == kLossScaleState ? initialScale : nullptr});
      }
    }
    // The updated buffers are @forward_grad's last results, in the order
    // of the buffer arguments: the entry points pair them by position.
    SmallVector<StringRef> updated;
    for (unsigned i = 0; i < grad.getNumResults(); ++i)
      if (auto name = grad.getResultAttrOfType<StringAttr>(i, attrs::kBuffer))
        updated.push_back(name.getValue());
    for (auto [k, i] : llvm::enumerate(sig.buffers))
      if (k >= updated.size() || updated[k] != argName(grad, i))
        return grad.emitError("buffer result ")
               << k << " must be the update of buffer argument '"
               << argName(grad, i) << "' (results follow the arguments' order)";
    for (unsigned i : sig.buffers) {
      Type type = grad.getArgumentTypes()[i];
      slots.initBuffers.push_back({type, attrs::Role::Buffer, argName(grad, i),
                                   grad.getArgAttr(i, attrs::kInit)});
      slots.buffers.push_back(
          {type, attrs::Role::Buffer, argName(grad, i), nullptr});
    }
    for (unsigned i : sig.frozen) {
      Type type = grad.getArgumentTypes()[i];
      slots.initFrozen.push_back({type, attrs::Role::Frozen, argName(grad, i),
                                  grad.getArgAttr(i, attrs::kInit)});
      slots.frozen.push_back(
          {type, attrs::Role::Frozen, argName(grad, i), nullptr});
    }
    for (unsigned i : sig.inputs)
      slots.inputs.push_back({grad.getArgumentTypes()[i], attrs::Role::Input,
                              argName(grad, i), nullptr});
    for (StringRef hyper : hyperNames(optimizer))
      slots.hypers.push_back(
          {f32Scalar, attrs::Role::Hyper, hyper.str(), nullptr});
    if (sig.rngKey)
      slots.rngKey.push_back({grad.getArgumentTypes()[*sig.rngKey],
                              attrs::Role::Hyper, "rng_key", nullptr});
    slots.loss = {f32Scalar, attrs::Role::Loss, "loss", nullptr};
    slots.gradNorm = {f32Scalar, attrs::Role::GradNorm, "grad_norm", nullptr};
    return slots;
  }

  /// Calls `func` (@forward_grad or @forward_eval) with the entry point's
  /// params, buffers, inputs and random key (none: a constant one, for an
  /// evaluation step that draws nothing) in the positions of its own
  /// signature.
  static func::CallOp callForward(OpBuilder &b, Location loc, func::FuncOp func,
                                  ValueRange params, ValueRange buffers,
                                  ValueRange frozen, ValueRange inputs,
                                  ValueRange rngKey, Value lossScale = {}) {
    Signature sig = classify(func);
    SmallVector<Value> callArgs(func.getNumArguments());
    if (sig.lossScale)
      callArgs[*sig.lossScale] = lossScale;
    if (sig.rngKey) {
      Type keyType = func.getArgumentTypes()[*sig.rngKey];
      callArgs[*sig.rngKey] =
          rngKey.empty() ? arith::ConstantOp::create(
                               b, loc, cast<TypedAttr>(b.getZeroAttr(keyType)))
                               .getResult()
                         : rngKey.front();
    }
    for (auto [k, i] : llvm::enumerate(sig.params))
      callArgs[i] = params[k];
    for (auto [k, i] : llvm::enumerate(sig.buffers))
      callArgs[i] = buffers[k];
    for (auto [k, i] : llvm::enumerate(sig.frozen))
      callArgs[i] = frozen[k];
    for (auto [k, i] : llvm::enumerate(sig.inputs))
      callArgs[i] = inputs[k];
    return func::CallOp::create(b, loc, func, callArgs);
  }

  /// `@grad_step(params, buffers, frozen, inputs[, rng_key]) -> (grads,
  /// buffers, loss)`: one micro-batch's gradients, for accumulation and
  /// data-parallel averaging by the runtime, and the updated buffers.
  void buildGradStep(ModuleOp module, func::FuncOp grad, const Slots &s) {
    // With loss scaling the scale comes right after the params.
    SmallVector<Slot> args(s.params);
    if (s.lossScaling)
      args.push_back(s.states[s.states.size() - 2]);
    size_t numLeading = args.size();
    llvm::append_range(args, s.buffers);
    llvm::append_range(args, s.frozen);
    llvm::append_range(args, s.inputs);
    llvm::append_range(args, s.rngKey);
    SmallVector<Slot> results = concat(s.grads, s.buffers);
    results.push_back(s.loss);
    func::FuncOp step = createEntryPoint(module, attrs::kGradStep, args,
                                         results);
    OpBuilder b = OpBuilder::atBlockEnd(&step.getBody().front());
    ValueRange stepArgs = step.getArguments();
    size_t numParams = s.params.size(), numBuffers = s.buffers.size(),
           numFrozen = s.frozen.size();
    // @forward_grad returns (loss, grads..., buffers...).
    auto call = callForward(
        b, step.getLoc(), grad, stepArgs.take_front(numParams),
        stepArgs.slice(numLeading, numBuffers),
        stepArgs.slice(numLeading + numBuffers, numFrozen),
        stepArgs.slice(numLeading + numBuffers + numFrozen, s.inputs.size()),
        stepArgs.take_back(s.rngKey.size()),
        s.lossScaling ? stepArgs[numParams] : Value());
    SmallVector<Value> returned(call.getResults().drop_front());
    returned.push_back(call.getResult(0));
    func::ReturnOp::create(b, step.getLoc(), returned);
  }

  /// `@apply_step(params, states, grads, hypers) -> (params, states,
  /// grad_norm)`: clipping and the optimizer update.
  func::FuncOp buildApplyStep(ModuleOp module, const Slots &s) {
    SmallVector<Slot> args = concat(s.params, s.states);
    llvm::append_range(args, s.grads);
    llvm::append_range(args, s.hypers);
    SmallVector<Slot> results = concat(s.params, s.states);
    results.push_back(s.gradNorm);
    func::FuncOp step = createEntryPoint(module, attrs::kApplyStep, args,
                                         results);
    OpBuilder b = OpBuilder::atBlockEnd(&step.getBody().front());
    Location loc = step.getLoc();
    size_t numParams = s.params.size(), numSlots = stateSlots(optimizer).size();
    ValueRange stepArgs = step.getArguments();
    ValueRange params = stepArgs.take_front(numParams);
    ValueRange states = stepArgs.slice(numParams, s.states.size());
    ValueRange hypers = stepArgs.take_back(s.hypers.size());
    SmallVector<Value> grads(
        stepArgs.slice(numParams + s.states.size(), numParams));

    SmallVector<Location> paramLocs = parameterLocations(b, loc, s);
    if (s.lossScaling) {
      // Unscale (the scale is a power of two: exact).
      Value scale = states[states.size() - 2];
      scaleGradients(b, loc, grads,
                     DivOp::create(b, loc,
                                   buildSplatLike(b, loc, scale, 1.0), scale),
                     paramLocs);
    }
    Value gradNorm = clipGradients(b, loc, grads, hypers.back(), paramLocs);
    SmallVector<Value> newParams, newStates;
    for (size_t k = 0; k < numParams; ++k) {
      ValueRange paramStates = states.slice(k * numSlots, numSlots);
      update(b, paramLocs[k], params[k], grads[k], paramStates, hypers,
             newParams, newStates);
    }
    Value finite = keepOnNonFiniteGradient(b, loc, gradNorm, params, states,
                                           newParams, newStates, paramLocs,
                                           numSlots);
    if (s.lossScaling)
      updateLossScale(b, loc, finite, states, newStates);
    SmallVector<Value> returned(newParams);
    llvm::append_range(returned, newStates);
    returned.push_back(gradNorm);
    func::ReturnOp::create(b, loc, returned);
    return step;
  }

  /// `@chunk_step(param, states, grad, hypers, grad_norm) -> (param,
  /// states)`: apply_step's update of one chunk of `chunkElements` floats
  /// of the parameters laid end to end (ZeRO-1: each data-parallel process
  /// updates its own range and keeps only its range's state). The runtime
  /// computes the global gradient norm, so clipping scales this chunk by
  /// the same factor apply_step would.
  void buildChunkStep(ModuleOp module, const Slots &s) {
    Builder builder(module.getContext());
    auto chunkType =
        RankedTensorType::get({int64_t(chunkElements)}, builder.getF32Type());
    SmallVector<Slot> states;
    for (StringRef slot : stateSlots(optimizer))
      states.push_back(
          {chunkType, attrs::Role::State, ("chunk." + slot).str(), nullptr});
    Slot param{chunkType, attrs::Role::Param, "chunk", nullptr};
    Slot grad{chunkType, attrs::Role::Grad, "chunk", nullptr};
    SmallVector<Slot> args{param};
    llvm::append_range(args, states);
    args.push_back(grad);
    llvm::append_range(args, s.hypers);
    args.push_back(s.gradNorm);
    SmallVector<Slot> results = concat({param}, states);
    func::FuncOp step = createEntryPoint(module, attrs::kChunkStep, args,
                                         results);
    OpBuilder b = OpBuilder::atBlockEnd(&step.getBody().front());
    Location loc = step.getLoc();
    ValueRange stepArgs = step.getArguments();
    ValueRange hypers = stepArgs.slice(2 + states.size(), s.hypers.size());
    SmallVector<Value> grads{stepArgs[1 + states.size()]};
    scaleGradients(b, loc, grads,
                   clipCoefficient(b, loc, stepArgs.back(), hypers.back()));
    SmallVector<Value> returned, newStates;
    update(b, loc, stepArgs[0], grads[0], stepArgs.slice(1, states.size()),
           hypers, returned, newStates);
    llvm::append_range(returned, newStates);
    func::ReturnOp::create(b, loc, returned);
  }

  /// `@train_step(params, states, buffers, frozen, inputs, hypers[,
  /// rng_key]) ->
  /// (params, states, buffers, loss, grad_norm)`: the fused step,
  /// @forward_grad then @apply_step.
  void buildTrainStep(ModuleOp module, func::FuncOp grad, func::FuncOp apply,
                      const Slots &s) {
    SmallVector<Slot> args = concat(s.initParams, s.initStates);
    llvm::append_range(args, s.initBuffers);
    llvm::append_range(args, s.initFrozen);
    llvm::append_range(args, s.inputs);
    llvm::append_range(args, s.hypers);
    llvm::append_range(args, s.rngKey);
    SmallVector<Slot> results = concat(s.params, s.states);
    llvm::append_range(results, s.buffers);
    results.push_back(s.loss);
    results.push_back(s.gradNorm);
    func::FuncOp step = createEntryPoint(module, attrs::kTrainStep, args,
                                         results);
    OpBuilder b = OpBuilder::atBlockEnd(&step.getBody().front());
    Location loc = step.getLoc();
    size_t numParams = s.params.size(), numStates = s.states.size(),
           numBuffers = s.buffers.size();
    ValueRange stepArgs = step.getArguments();
    ValueRange paramsAndStates = stepArgs.take_front(numParams + numStates);
    ValueRange buffers = stepArgs.slice(numParams + numStates, numBuffers);
    ValueRange frozen = stepArgs.slice(numParams + numStates + numBuffers,
                                       s.frozen.size());
    size_t firstInput = numParams + numStates + numBuffers + s.frozen.size();
    ValueRange inputs = stepArgs.slice(firstInput, s.inputs.size());
    ValueRange hypers =
        stepArgs.slice(firstInput + s.inputs.size(), s.hypers.size());

    // (loss, grads..., buffers...)
    auto forward = callForward(
        b, loc, grad, stepArgs.take_front(numParams), buffers, frozen, inputs,
        stepArgs.take_back(s.rngKey.size()),
        s.lossScaling ? stepArgs[numParams + numStates - 2] : Value());
    SmallVector<Value> applyArgs(paramsAndStates);
    llvm::append_range(applyArgs,
                       forward.getResults().slice(1, numParams));
    llvm::append_range(applyArgs, hypers);
    auto updated = func::CallOp::create(b, loc, apply, applyArgs);
    // A non-finite loss keeps the params and state too (apply_step sees
    // only the gradients; the runtime does not call it after such a loss).
    // At the parameters' locations: the update fuses into these selects,
    // and a fused loop is named by its last op.
    Value lossFinite = isFiniteScalar(b, loc, forward.getResult(0));
    SmallVector<Location> paramLocs = parameterLocations(b, loc, s);
    size_t numSlots = stateSlots(optimizer).size();
    SmallVector<Value> returned;
    for (auto [i, result, old] : llvm::enumerate(
             updated.getResults().take_front(numParams + numStates),
             paramsAndStates)) {
      Location at = i < numParams ? paramLocs[i]
                                  : stateLocation(paramLocs, numSlots,
                                                  i - numParams, loc);
      returned.push_back(keepUnless(b, at, lossFinite, result, old));
    }
    llvm::append_range(returned, forward.getResults().take_back(numBuffers));
    returned.push_back(forward.getResult(0));
    returned.push_back(updated.getResults().back());
    func::ReturnOp::create(b, loc, returned);
  }

  /// Each parameter's norm, clipping and update at a location naming it
  /// ("adamw:blocks.0.fc.weight"): `--profile` labels its loops so.
  SmallVector<Location> parameterLocations(OpBuilder &b, Location loc,
                                           const Slots &s) {
    SmallVector<Location> locs;
    for (const Slot &param : s.params)
      locs.push_back(NameLoc::get(
          b.getStringAttr(optimizerName(optimizer) + (":" + param.name)), loc));
    return locs;
  }

  /// The location of state `i` (param-major, `numSlots` each): its
  /// parameter's, or `loc` for the states after theirs (the loss scaler's).
  static Location stateLocation(ArrayRef<Location> paramLocs, size_t numSlots,
                                size_t i, Location loc) {
    size_t owner = numSlots ? i / numSlots : paramLocs.size();
    return owner < paramLocs.size() ? paramLocs[owner] : loc;
  }

  /// A step whose gradient norm is not finite (an inf or NaN gradient, or a
  /// norm beyond f32's range) keeps every param and optimizer state as it
  /// was: the runtime updates them in place (lmc-tie-updates-to-arguments),
  /// so skipping such a step (--on-nonfinite skip, dynamic loss scaling)
  /// must happen here. Returns the finiteness (an i1 scalar).
  /// Param k and its `numSlots` state slots are kept at `paramLocs[k]`;
  /// states past them (the loss scaler's) at `loc`.
  Value keepOnNonFiniteGradient(OpBuilder &b, Location loc, Value gradNorm,
                                ValueRange params, ValueRange states,
                                SmallVectorImpl<Value> &newParams,
                                SmallVectorImpl<Value> &newStates,
                                ArrayRef<Location> paramLocs,
                                size_t numSlots) {
    Value finite = isFiniteScalar(b, loc, gradNorm, /*nonNegative=*/true);
    for (auto [k, updated, old] : llvm::enumerate(newParams, params))
      updated = keepUnless(b, paramLocs[k], finite, updated, old);
    for (auto [i, updated, old] : llvm::enumerate(newStates, states))
      updated = keepUnless(b, stateLocation(paramLocs, numSlots, i, loc),
                           finite, updated, old);
    return finite;
  }

  /// An i1 scalar: |value| < inf (false for NaN); a `nonNegative` value (a
  /// norm) is compared as it is.
  static Value isFiniteScalar(OpBuilder &b, Location loc, Value value,
                              bool nonNegative = false) {
    Value magnitude = nonNegative ? value : AbsOp::create(b, loc, value);
    return buildCompare(
        b, loc, CmpPredicate::lt, magnitude,
        buildSplatLike(b, loc, magnitude,
                       std::numeric_limits<double>::infinity()));
  }

  /// `updated` where the i1 scalar `condition` holds, else `old`.
  static Value keepUnless(OpBuilder &b, Location loc, Value condition,
                          Value updated, Value old) {
    auto type = cast<RankedTensorType>(old.getType());
    if (type.getRank() > 0)
      condition = BroadcastInDimOp::create(
          b, loc, RankedTensorType::get(type.getShape(), b.getI1Type()),
          condition, ArrayRef<int64_t>{});
    return buildSelect(b, loc, condition, updated, old);
  }

  /// Dynamic loss scaling after the update: a step with a non-finite
  /// gradient norm (kept by keepOnNonFiniteGradient) halves the scale;
  /// otherwise the scale doubles after `lossScaleGrowthInterval` clean
  /// steps in a row. Appends the scaler's new state to `newStates`.
  void updateLossScale(OpBuilder &b, Location loc, Value finite,
                       ValueRange states, SmallVectorImpl<Value> &newStates) {
    Value scale = states[states.size() - 2], tracker = states.back();
    auto constant = [&](double v) { return buildSplatLike(b, loc, scale, v); };
    Value cleanSteps = AddOp::create(b, loc, tracker, constant(1.0));
    Value grow = buildCompare(b, loc, CmpPredicate::ge, cleanSteps,
                              constant(double(lossScaleGrowthInterval)));
    Value grown = buildSelect(b, loc, grow,
                              MulOp::create(b, loc, scale, constant(2.0)),
                              scale);
    Value halved = MulOp::create(b, loc, scale, constant(0.5));
    newStates.push_back(buildSelect(b, loc, finite, grown, halved));
    Value tracked = buildSelect(b, loc, grow, constant(0.0), cleanSteps);
    newStates.push_back(buildSelect(b, loc, finite, tracked, constant(0.0)));
  }

  static SmallVector<Slot> concat(ArrayRef<Slot> a, ArrayRef<Slot> b) {
    SmallVector<Slot> all(a);
    llvm::append_range(all, b);
    return all;
  }

  /// Appends the updated parameter and its updated state slots. Every op is
  /// a named step so that the emitted order does not depend on the C++
  /// compiler's argument evaluation order.
  void update(OpBuilder &b, Location loc, Value p, Value g, ValueRange state,
              ValueRange hypers, SmallVectorImpl<Value> &newParams,
              SmallVectorImpl<Value> &newStates) {
    auto constant = [&](double v) { return buildSplatLike(b, loc, p, v); };
    auto hyper = [&](unsigned i) {
      return buildBroadcastScalar(b, loc, hypers[i], p);
    };
    auto mul = [&](Value x, Value y) -> Value {
      return MulOp::create(b, loc, x, y);
    };
    auto add = [&](Value x, Value y) -> Value {
      return AddOp::create(b, loc, x, y);
    };
    auto sub = [&](Value x, Value y) -> Value {
      return SubOp::create(b, loc, x, y);
    };
    auto div = [&](Value x, Value y) -> Value {
      return DivOp::create(b, loc, x, y);
    };
    Value lr = hyper(0);
    bool decoupled = optimizer == Optimizer::AdamW;
    // L2 penalty folded into the gradient (torch: grad.add(param, alpha=wd)).
    if (weightDecay != 0.0 && !decoupled) {
      Value penalty = mul(p, constant(weightDecay));
      g = add(g, penalty);
    }

    if (optimizer == Optimizer::Sgd) {
      Value step = mul(lr, g);
      newParams.push_back(sub(p, step));
      return;
    }
    if (optimizer == Optimizer::Momentum) {
      Value decayed = mul(state[0], constant(momentum));
      Value buf = add(decayed, g);
      newStates.push_back(buf);
      Value step = mul(lr, buf);
      newParams.push_back(sub(p, step));
      return;
    }
    // Adam / AdamW.
    if (decoupled && weightDecay != 0.0) {
      Value one = constant(1.0);
      Value lrTimesDecay = mul(lr, constant(weightDecay));
      p = mul(p, sub(one, lrTimesDecay));
    }
    // exp_avg.lerp_(grad, 1 - beta1)
    Value delta = sub(g, state[0]);
    Value m = add(state[0], mul(constant(1.0 - beta1), delta));
    // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    Value vDecayed = mul(state[1], constant(beta2));
    Value gScaled = mul(constant(1.0 - beta2), g);
    Value v = add(vDecayed, mul(gScaled, g));
    // denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
    Value root = SqrtOp::create(b, loc, v);
    Value scaledRoot = div(root, hyper(2));
    Value denom = add(scaledRoot, constant(eps));
    // param.addcdiv_(exp_avg, denom, value=-step_size)
    Value ratio = div(m, denom);
    Value step = mul(hyper(1), ratio);
    newStates.push_back(m);
    newStates.push_back(v);
    newParams.push_back(sub(p, step));
  }

  /// `@eval_step(params, buffers, frozen, inputs) -> (loss, outputs)`: the
  /// forward in evaluation mode; buffers are read, not updated.
  void buildEvalStep(ModuleOp module, func::FuncOp forward) {
    Signature sig = classify(forward);
    SmallVector<Slot> args, results;
    for (auto [indices, role] :
         {std::make_pair(&sig.params, attrs::Role::Param),
          std::make_pair(&sig.buffers, attrs::Role::Buffer),
          std::make_pair(&sig.frozen, attrs::Role::Frozen),
          std::make_pair(&sig.inputs, attrs::Role::Input)})
      for (unsigned i : *indices)
        args.push_back({forward.getArgumentTypes()[i], role,
                        argName(forward, i), nullptr});
    SmallVector<unsigned> returnedResults;
    for (unsigned i = 0; i < forward.getNumResults(); ++i) {
      if (forward.getResultAttr(i, attrs::kBuffer))
        continue;
      returnedResults.push_back(i);
      auto name = forward.getResultAttrOfType<StringAttr>(i, attrs::kOutput);
      std::string outName =
          name ? name.str() : ("output" + Twine(i)).str();
      results.push_back({forward.getResultTypes()[i],
                         i == 0 ? attrs::Role::Loss : attrs::Role::Output,
                         outName, nullptr});
    }
    func::FuncOp eval =
        createEntryPoint(module, attrs::kEvalStep, args, results);
    OpBuilder b = OpBuilder::atBlockEnd(&eval.getBody().front());
    ValueRange evalArgs = eval.getArguments();
    size_t numParams = sig.params.size(), numBuffers = sig.buffers.size(),
           numFrozen = sig.frozen.size();
    auto call = callForward(
        b, eval.getLoc(), forward, evalArgs.take_front(numParams),
        evalArgs.slice(numParams, numBuffers),
        evalArgs.slice(numParams + numBuffers, numFrozen),
        evalArgs.drop_front(numParams + numBuffers + numFrozen),
        /*rngKey=*/{});
    SmallVector<Value> returned;
    for (unsigned i : returnedResults)
      returned.push_back(call.getResult(i));
    func::ReturnOp::create(b, eval.getLoc(), returned);
  }
};

} // namespace
