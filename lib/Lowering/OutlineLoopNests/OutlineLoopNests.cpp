//===- OutlineLoopNests.cpp - Each loop nest of a step in its own function ===//
//
// LLVM optimizes functions one at a time, and some of its analyses are
// superlinear in a function's size: a GPT's train_step of ~400 loop nests
// spent minutes in IndVarSimplify. Outlined, each nest is a small function
// of its own (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace lmc {
#define GEN_PASS_DEF_LMCOUTLINELOOPNESTS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Ops cloned into the outlined function rather than passed to it: cheap,
/// side-effect free, and (for views) turning an argument with a strided
/// layout into one with the identity layout.
bool isCloned(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() ||
         isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
             memref::CastOp, memref::ReinterpretCastOp, memref::GetGlobalOp>(
             op);
}

/// Whether a value can be an argument under the bare-pointer calling
/// convention.
bool isPassable(Value value) {
  if (auto memref = dyn_cast<MemRefType>(value.getType()))
    return memref.hasStaticShape() && memref.getLayout().isIdentity();
  return value.getType().isIntOrIndexOrFloat();
}

/// The values a loop nest reads from outside itself, and the ops to clone so
/// that the rest are passable; fails when one is not.
struct Captures {
  SmallVector<Value> arguments;       // distinct, in first-use order
  SmallVector<Operation *> clonedOps; // in dominance order
};

FailureOr<Captures> findCaptures(Operation *loop) {
  Captures captures;
  llvm::SetVector<Value> arguments;
  llvm::SetVector<Operation *> cloned;
  bool passable = true;
  // Depth first through cloned ops, so that an op's operands are handled
  // (and its cloned producers listed) before it.
  std::function<void(Value)> capture = [&](Value value) {
    if (loop->getRegion(0).isAncestor(value.getParentRegion()))
      return; // defined inside
    Operation *def = value.getDefiningOp();
    if (def && isCloned(def)) {
      if (cloned.contains(def))
        return;
      for (Value operand : def->getOperands())
        capture(operand);
      cloned.insert(def);
      return;
    }
    passable &= isPassable(value);
    arguments.insert(value);
  };
  loop->walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      capture(operand);
  });
  if (!passable)
    return failure();
  captures.arguments = arguments.takeVector();
  captures.clonedOps = cloned.takeVector();
  return captures;
}

/// Whether `value` is a buffer of its own: an allocation, a buffer
/// lmc-plan-buffers placed in an arena (disjoint from every buffer live
/// at the same time, as any two that one loop nest reads are), or an
/// argument of the step function (the runtime passes every tensor in a
/// buffer of its own: docs/runtime-abi.md). The last lets the hypers a
/// nest reads (AdamW's step size) leave its loops
/// (lmc-hoist-invariant-loads), so that the optimizer's update vectorizes.
bool isDistinctBuffer(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    return function && argument.getOwner()->isEntryBlock() &&
           isa<MemRefType>(value.getType());
  }
  Operation *def = value.getDefiningOp();
  return def && (isa<memref::AllocOp>(def) ||
                 (isa<memref::ViewOp>(def) && def->hasAttr(attrs::kPlanned)));
}

/// The buffer `value` views (itself when it is no view).
Value viewRoot(Value value) {
  while (!isDistinctBuffer(value)) {
    auto view = value.getDefiningOp<ViewLikeOpInterface>();
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// Outlines `loop` into a function placed after `previous` (the caller or
/// its last outlined nest), which then becomes that function.
void outline(Operation *loop, func::FuncOp caller, SymbolTable &symbols,
             Operation *&previous, int64_t &counter) {
  FailureOr<Captures> captures = findCaptures(loop);
  if (failed(captures))
    return;

  Location loc = loop->getLoc();
  OpBuilder builder(caller);
  builder.setInsertionPointAfter(previous);
  auto type =
      builder.getFunctionType(ValueRange(captures->arguments).getTypes(), {});
  auto callee = func::FuncOp::create(
      builder, loc, (caller.getSymName() + "_loop" + Twine(counter++)).str(),
      type);
  callee.setPrivate();
  callee->setAttr(attrs::kOutlined, builder.getUnitAttr());
  symbols.insert(callee, builder.getInsertionPoint()); // renames on a clash
  previous = callee;
  // A distinct buffer no other argument views is noalias.
  llvm::DenseMap<Value, int> argumentsPerRoot;
  for (Value value : captures->arguments)
    ++argumentsPerRoot[viewRoot(value)];
  for (auto [i, value] : llvm::enumerate(captures->arguments))
    if (isDistinctBuffer(value) && argumentsPerRoot[value] == 1)
      callee.setArgAttr(i, "llvm.noalias", builder.getUnitAttr());

  Block *body = callee.addEntryBlock();
  IRMapping mapping;
  mapping.map(captures->arguments, body->getArguments());
  builder.setInsertionPointToStart(body);
  for (Operation *op : captures->clonedOps)
    builder.clone(*op, mapping);
  builder.clone(*loop, mapping);
  func::ReturnOp::create(builder, loc);

  builder.setInsertionPoint(loop);
  func::CallOp::create(builder, loc, callee, captures->arguments);
  loop->erase();
}

struct OutlineLoopNestsPass
    : public impl::LmcOutlineLoopNestsBase<OutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> callers(module.getOps<func::FuncOp>());
    for (func::FuncOp caller : callers) {
      if (caller.isExternal() || caller->hasAttr(attrs::kOutlined))
        continue;
      int64_t counter = 0;
      Operation *previous = caller;
      for (Operation &op : llvm::make_early_inc_range(caller.getBody().front()))
        if (isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0)
          outline(&op, caller, symbols, previous, counter);
    }
  }
};

} // namespace
} // namespace lmc
