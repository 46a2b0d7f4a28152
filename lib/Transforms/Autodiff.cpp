//===- Autodiff.cpp - reverse-mode differentiation of @forward ------------===//
//
// Activity analysis picks the values on a path from a trainable parameter to
// the loss; a reverse sweep over their defining ops accumulates cotangents
// through DifferentiableOpInterface (docs/design.md §3; both in ReverseSweep.h,
// which the ONNX importer's Gradient op shares). This pass adds the
// parameter folding (--freeze/--train), lmc-lora's frozen base kept as
// arguments (its bf16 widenings recomputed for the backward pass), buffer
// pass-through and the optional loss-scale seed.
//
//===----------------------------------------------------------------------===//

#include "FrozenParameters.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Transforms/Passes.h"
#include "lmc/Transforms/ReverseSweep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

namespace lmc {
#define GEN_PASS_DEF_LMCAUTODIFF
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;
using namespace lmc;

namespace {

/// The forward ops of `func`'s body, in order (a snapshot: the gradient
/// code is inserted before the terminator while they are walked).
SmallVector<Operation *> forwardOps(func::FuncOp func) {
  return llvm::map_to_vector(func.getBody().front().without_terminator(),
                             [](Operation &op) { return &op; });
}

/// Tags the ops after `lastForward` up to `end` (what the reverse sweep
/// built) as backward ops: a FusedLoc with kBackwardLoc around each one's
/// location, which stays the forward op's (diagnostics still name it).
void markBackward(Operation *lastForward, Operation *end) {
  Operation *op = lastForward ? lastForward->getNextNode()
                              : &end->getBlock()->front();
  for (; op != end; op = op->getNextNode())
    op->setLoc(FusedLoc::get({op->getLoc()},
                             StringAttr::get(op->getContext(),
                                             attrs::kBackwardLoc),
                             op->getContext()));
}

/// A parameter lmc-lora froze: it stays an argument (the executable holds
/// it as a tensor, role `frozen`) without a gradient.
bool isRunTimeFrozen(func::FuncOp func, unsigned index) {
  return func.getArgAttr(index, attrs::kFrozen) != nullptr;
}

/// Values that depend on a trained parameter and that the loss depends on.
llvm::DenseSet<Value> findActiveValues(func::FuncOp func) {
  SmallVector<Value> params;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), attrs::kParam) &&
        !isRunTimeFrozen(func, arg.getArgNumber()))
      params.push_back(arg);
  Value loss = func.getBody().front().getTerminator()->getOperand(0);
  return lmc::findActiveValues(forwardOps(func), params, loss);
}

/// Parameters with no differentiable path to the loss (masks, position
/// tables, unused weights) and frozen ones (--freeze) become constants of
/// their initial value; lmc-lora's frozen base stays an argument unless
/// nothing reads it.
LogicalResult foldInactiveParameters(func::FuncOp func,
                                     const llvm::DenseSet<Value> &active,
                                     const FrozenParameters &frozen) {
  OpBuilder b(&func.getBody().front(), func.getBody().front().begin());
  llvm::BitVector erase(func.getNumArguments());
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kParam);
    if (!name)
      continue;
    if (isRunTimeFrozen(func, i)) {
      if (arg.use_empty())
        erase.set(i);
      continue;
    }
    if (active.count(arg) && !frozen.isFrozen(name.getValue()))
      continue;
    if (!arg.use_empty()) {
      auto init = func.getArgAttrOfType<ElementsAttr>(i, attrs::kInit);
      if (!init)
        return func.emitError("parameter ")
               << name << " is constant (frozen, or no path to the loss) "
               << "but has no initial value";
      Value constant = arith::ConstantOp::create(b, arg.getLoc(), init);
      arg.replaceAllUsesWith(constant);
    }
    erase.set(i);
  }
  return func.eraseArguments(erase);
}

/// Whether `value` is computed from lmc-lora's frozen arguments by
/// conversions and moves alone, at least one conversion among them (a bf16
/// base weight widened for a reader).
bool isFrozenConversion(func::FuncOp func, Value value,
                        bool sawConvert = false) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return sawConvert && arg.getOwner() == &func.getBody().front() &&
           isRunTimeFrozen(func, arg.getArgNumber());
  Operation *def = value.getDefiningOp();
  if (!isa_and_nonnull<ConvertOp, TransposeOp, ReshapeOp>(def))
    return false;
  return isFrozenConversion(func, def->getOperand(0),
                            sawConvert || isa<ConvertOp>(def));
}

/// The backward pass reads forward values the bf16 base was widened to
/// (the rhs of a product whose lhs is differentiated): instead of keeping
/// each such f32 copy from the forward pass until then — the whole base in
/// f32 again — every backward reader gets its own recomputation from the
/// bf16 argument, behind an optimization barrier so that CSE does not
/// merge it back into the forward one.
void recomputeFrozenConversions(func::FuncOp func, Operation *lastForward) {
  Block &body = func.getBody().front();
  Operation *first = lastForward ? lastForward->getNextNode() : &body.front();
  SmallVector<Operation *> backward;
  for (Operation *op = first; op != body.getTerminator();
       op = op->getNextNode())
    backward.push_back(op);
  for (Operation *op : backward)
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (isa<BlockArgument>(value) || !isFrozenConversion(func, value))
        continue;
      // The chain from the argument up, recomputed right before `op`.
      SmallVector<Operation *> chain;
      for (Value v = value; !isa<BlockArgument>(v);
           v = v.getDefiningOp()->getOperand(0))
        chain.push_back(v.getDefiningOp());
      OpBuilder b(op);
      Value arg = chain.back()->getOperand(0);
      Value current = OptimizationBarrierOp::create(b, op->getLoc(),
                                                    arg.getType(), arg);
      for (Operation *step : llvm::reverse(chain)) {
        IRMapping mapping;
        mapping.map(step->getOperand(0), current);
        current = b.clone(*step, mapping)->getResult(0);
      }
      operand.set(current);
    }
}

struct AutodiffPass : public lmc::impl::LmcAutodiffBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward) {
      module.emitError("expected a function named '") << function << "'";
      return signalPassFailure();
    }
    if (failed(differentiate(module, forward)))
      return signalPassFailure();
  }

  LogicalResult differentiate(ModuleOp module, func::FuncOp forward) {
    if (!forward.getBody().hasOneBlock())
      return forward.emitError("expected a single-block function");
    if (forward.getNumResults() == 0 ||
        !isFloatTensor(forward.getBody().front().getTerminator()->getOperand(0)) ||
        cast<RankedTensorType>(forward.getResultTypes()[0]).getRank() != 0)
      return forward.emitError(
          "expected the first result to be a scalar float loss");

    FailureOr<FrozenParameters> frozen =
        FrozenParameters::create(module, freeze, train);
    if (failed(frozen) ||
        failed(foldInactiveParameters(forward, findActiveValues(forward),
                                      *frozen)))
      return failure();

    func::FuncOp grad = forward.clone();
    grad.setName(function + "_grad");
    module.insert(std::next(Block::iterator(forward)), grad);

    llvm::DenseSet<Value> active = findActiveValues(grad);
    Operation *terminator = grad.getBody().front().getTerminator();
    OpBuilder b(terminator);
    Value seed;
    if (lossScale) {
      // The loss scale, converted to the loss's type (f32 or f64).
      auto scaleType = RankedTensorType::get({}, b.getF32Type());
      unsigned index = grad.getNumArguments();
      if (failed(grad.insertArgument(
              index, scaleType,
              b.getDictionaryAttr(
                  b.getNamedAttr(attrs::kLossScale, b.getUnitAttr())),
              grad.getLoc())))
        return failure();
      seed = grad.getArgument(index);
      Type lossType = terminator->getOperand(0).getType();
      if (lossType != scaleType)
        seed = ConvertOp::create(b, grad.getLoc(), lossType, seed);
    }
    Value loss = terminator->getOperand(0);
    if (!seed)
      seed = buildSplatLike(b, loss.getLoc(), loss, 1.0);
    Operation *lastForward = terminator->getPrevNode();
    ReverseSweep sweep(active);
    if (failed(sweep.run(forwardOps(grad), loss, seed, b)))
      return failure();
    markBackward(lastForward, terminator);
    recomputeFrozenConversions(grad, lastForward);

    SmallVector<Value> results{terminator->getOperand(0)};
    SmallVector<Attribute> resultAttrs{b.getDictionaryAttr(
        b.getNamedAttr(attrs::kOutput, b.getStringAttr("loss")))};
    for (BlockArgument arg : grad.getArguments()) {
      Attribute name = grad.getArgAttr(arg.getArgNumber(), attrs::kParam);
      if (!name || isRunTimeFrozen(grad, arg.getArgNumber()))
        continue;
      Value ct = sweep.cotangentOf(arg);
      if (!ct)
        ct = buildSplatLike(b, arg.getLoc(), arg, 0.0);
      results.push_back(ct);
      resultAttrs.push_back(
          b.getDictionaryAttr(b.getNamedAttr(attrs::kParam, name)));
    }
    // Buffer updates pass through: they are forward values, not gradients.
    for (unsigned i = 0; i < grad.getNumResults(); ++i)
      if (Attribute name = grad.getResultAttr(i, attrs::kBuffer)) {
        results.push_back(terminator->getOperand(i));
        resultAttrs.push_back(
            b.getDictionaryAttr(b.getNamedAttr(attrs::kBuffer, name)));
      }
    terminator->setOperands(results);
    grad.setType(FunctionType::get(grad.getContext(), grad.getArgumentTypes(),
                                   ValueRange(results).getTypes()));
    grad.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
