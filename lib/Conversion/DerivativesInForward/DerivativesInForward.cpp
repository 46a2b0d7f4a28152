//===- DerivativesInForward.cpp - activation derivatives saved forward ----===//
//
// The gradient of an activation y = f(x) is dx = dy * f'(x): after
// elementwise fusion, one backward loop that reads dy and what the forward
// read (x, a bias) and computes f' all over again (GELU's: erf and exp per
// element). The forward's loop reads the same inputs and already computes
// most of f' (GELU's erf): this pass has it compute f' beside y and save
// it, and leaves the backward loop a product dy * f'. The loop's inputs it
// no longer reads (the product before the activation) can then die at the
// forward's end, so the step keeps about as much memory as before.
//
// The backward loop must be the cotangent times a factor: its yield
// linear in one input and homogeneous (no term without it), so that the
// factor is the body with that input set to 1. In exact arithmetic the
// two agree; in floating point dy * f'(x) is how PyTorch's own GELU
// backward computes it.
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"

namespace lmc {
#define GEN_PASS_DEF_LMCDERIVATIVESINFORWARD
#include "lmc/Conversion/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// How a value of a loop body depends on the cotangent argument.
enum class Dependence { None, Linear, Other };

/// How `value` depends on `cotangent` (a block argument of the body): Linear
/// when it is the cotangent times something that does not depend on it.
Dependence dependence(Value value, BlockArgument cotangent,
                      DenseMap<Value, Dependence> &known) {
  if (value == cotangent)
    return Dependence::Linear;
  if (auto it = known.find(value); it != known.end())
    return it->second;
  Operation *op = value.getDefiningOp();
  if (!op || op->getBlock() != cotangent.getOwner())
    return Dependence::None; // a block argument or a value from outside
  SmallVector<Dependence> operands;
  for (Value operand : op->getOperands())
    operands.push_back(dependence(operand, cotangent, known));
  auto all = [&](Dependence d) { return llvm::count(operands, d) == int64_t(operands.size()); };
  Dependence result = Dependence::Other;
  if (all(Dependence::None))
    result = Dependence::None;
  else if (isa<arith::AddFOp, arith::SubFOp>(op))
    result = all(Dependence::Linear) ? Dependence::Linear : Dependence::Other;
  else if (isa<arith::NegFOp>(op))
    result = operands[0];
  else if (isa<arith::MulFOp>(op) &&
           llvm::is_contained(operands, Dependence::None) &&
           llvm::is_contained(operands, Dependence::Linear))
    result = Dependence::Linear;
  else if (isa<arith::DivFOp>(op) && operands[0] == Dependence::Linear &&
           operands[1] == Dependence::None)
    result = Dependence::Linear;
  known[value] = result;
  return result;
}

/// Whether the derivative is worth computing in the forward: it evaluates
/// a math function (erf, exp, tanh).
bool hasMathFunction(linalg::GenericOp op) {
  return llvm::any_of(op.getRegion().front(), [](Operation &inner) {
    return isa<math::MathDialect>(inner.getDialect());
  });
}

/// An all-parallel generic on tensors with one f32 result whose body is
/// arithmetic and math functions only.
bool isElementwiseF32(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumParallelLoops() == op.getNumLoops() &&
         cast<RankedTensorType>(op.getResult(0).getType())
             .getElementType()
             .isF32() &&
         llvm::all_of(op.getRegion().front().without_terminator(),
                      [](Operation &inner) {
                        return isa<arith::ArithDialect, math::MathDialect>(
                            inner.getDialect());
                      });
}

/// The forward loop that reads every input of `backward` but the cotangent
/// (operand `cotangent`) with the same indexing map, over the same loops,
/// before it; and one full-size input that only the two read (so that
/// saving the derivative instead of it costs no memory). Null if none.
linalg::GenericOp forwardLoop(linalg::GenericOp backward, OpOperand *cotangent,
                              DominanceInfo &dominance) {
  SmallVector<OpOperand *> reads;
  for (OpOperand *input : backward.getDpsInputOperands())
    if (input != cotangent)
      reads.push_back(input);
  if (reads.empty())
    return nullptr;
  for (Operation *user : reads.front()->get().getUsers()) {
    auto forward = dyn_cast<linalg::GenericOp>(user);
    if (!forward || forward == backward || !isElementwiseF32(forward) ||
        forward->getBlock() != backward->getBlock() ||
        !dominance.properlyDominates(forward.getOperation(), backward) ||
        forward.getStaticLoopRanges() != backward.getStaticLoopRanges())
      continue;
    bool readsAll = llvm::all_of(reads, [&](OpOperand *read) {
      return llvm::any_of(forward.getDpsInputOperands(), [&](OpOperand *f) {
        return f->get() == read->get() &&
               forward.getMatchingIndexingMap(f) ==
                   backward.getMatchingIndexingMap(read);
      });
    });
    bool freesOne = llvm::any_of(reads, [&](OpOperand *read) {
      return backward.getMatchingIndexingMap(read).isPermutation() &&
             llvm::all_of(read->get().getUsers(), [&](Operation *u) {
               return u == forward.getOperation() ||
                      u == backward.getOperation();
             });
    });
    if (readsAll && freesOne)
      return forward;
  }
  return nullptr;
}

/// Adds to `forward` a result that is `backward`'s body with the cotangent
/// argument `cotangent` set to 1; returns the new forward op.
linalg::GenericOp addDerivative(linalg::GenericOp forward,
                                linalg::GenericOp backward,
                                OpOperand *cotangent) {
  OpBuilder b(forward);
  Location loc = backward.getLoc();
  Value init = tensor::EmptyOp::create(
      b, loc, cast<RankedTensorType>(backward.getResult(0).getType()).getShape(),
      b.getF32Type());
  SmallVector<AffineMap> maps = forward.getIndexingMapsArray();
  maps.push_back(backward.getIndexingMapsArray().back());
  SmallVector<Value> inits(forward.getDpsInits());
  inits.push_back(init);
  SmallVector<Type> types(forward->getResultTypes());
  types.push_back(init.getType());
  auto extended = linalg::GenericOp::create(
      b, forward.getLoc(), types, forward.getDpsInputs(), inits, maps,
      forward.getIteratorTypesArray());
  // The forward's body, then the backward's with its arguments mapped to
  // the forward's (the same tensors) and the cotangent to 1.
  Block &body = extended.getRegion().emplaceBlock();
  Block &old = forward.getRegion().front();
  IRMapping mapping;
  for (BlockArgument arg : old.getArguments())
    mapping.map(arg, body.addArgument(arg.getType(), arg.getLoc()));
  BlockArgument derivativeOut = body.addArgument(b.getF32Type(), loc);
  OpBuilder inner = OpBuilder::atBlockEnd(&body);
  for (Operation &op : old.without_terminator())
    inner.clone(op, mapping);
  IRMapping fromBackward;
  Block &backwardBody = backward.getRegion().front();
  for (OpOperand *input : backward.getDpsInputOperands()) {
    BlockArgument arg = backwardBody.getArgument(input->getOperandNumber());
    if (input == cotangent) {
      fromBackward.map(arg, arith::ConstantOp::create(
                                inner, loc, inner.getF32FloatAttr(1.0f)));
      continue;
    }
    for (OpOperand *f : forward.getDpsInputOperands())
      if (f->get() == input->get() &&
          forward.getMatchingIndexingMap(f) ==
              backward.getMatchingIndexingMap(input))
        fromBackward.map(arg, mapping.lookup(old.getArgument(
                                  f->getOperandNumber())));
  }
  fromBackward.map(backwardBody.getArguments().back(), derivativeOut);
  for (Operation &op : backwardBody.without_terminator())
    inner.clone(op, fromBackward);
  SmallVector<Value> yields;
  for (Value v : old.getTerminator()->getOperands())
    yields.push_back(mapping.lookup(v));
  yields.push_back(fromBackward.lookup(
      backwardBody.getTerminator()->getOperand(0)));
  linalg::YieldOp::create(inner, loc, yields);
  for (auto [from, to] :
       llvm::zip(forward->getResults(), extended->getResults()))
    from.replaceAllUsesWith(to);
  forward->erase();
  return extended;
}

/// Rewrites `backward` as its cotangent times `derivative`.
void multiplyByDerivative(linalg::GenericOp backward, OpOperand *cotangent,
                          Value derivative) {
  OpBuilder b(backward);
  Location loc = backward.getLoc();
  AffineMap resultMap = backward.getIndexingMapsArray().back();
  auto product = linalg::GenericOp::create(
      b, loc, backward->getResultTypes(),
      ValueRange{cotangent->get(), derivative}, backward.getDpsInits(),
      {backward.getMatchingIndexingMap(cotangent), resultMap, resultMap},
      backward.getIteratorTypesArray(),
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Value y = arith::MulFOp::create(nested, l, args[0], args[1]);
        linalg::YieldOp::create(nested, l, y);
      });
  backward->replaceAllUsesWith(product);
  backward->erase();
}

struct DerivativesInForward
    : public impl::LmcDerivativesInForwardBase<DerivativesInForward> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isElementwiseF32(op) && hasMathFunction(op))
        candidates.push_back(op);
    });
    DominanceInfo dominance(getOperation());
    // A forward loop may gain one derivative per backward loop; an op
    // replaced here is not visited again.
    llvm::SmallPtrSet<Operation *, 16> replaced;
    for (linalg::GenericOp backward : candidates) {
      if (replaced.contains(backward))
        continue;
      Block &body = backward.getRegion().front();
      Value yielded = body.getTerminator()->getOperand(0);
      for (OpOperand *input : backward.getDpsInputOperands()) {
        if (!backward.getMatchingIndexingMap(input).isPermutation())
          continue;
        DenseMap<Value, Dependence> known;
        BlockArgument arg = body.getArgument(input->getOperandNumber());
        if (dependence(yielded, arg, known) != Dependence::Linear)
          continue;
        linalg::GenericOp forward = forwardLoop(backward, input, dominance);
        if (!forward)
          continue;
        replaced.insert(forward);
        replaced.insert(backward);
        linalg::GenericOp extended = addDerivative(forward, backward, input);
        multiplyByDerivative(backward, input, extended->getResults().back());
        break;
      }
    }
  }
};

} // namespace
} // namespace lmc
