//===- ShardComplete.cpp - What sharding propagation leaves bare ----------===//
//
// Upstream `shard-partition` needs a sharding for every tensor it meets,
// read through an annotation; `sharding-propagation` leaves some bare and
// MLIR 22's partitioner then fails without a message or crashes. Run
// between the two, this pass completes the annotations (each case has a
// lit test in test/Transforms/shard-complete*.mlir).
//
//===----------------------------------------------------------------------===//

#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace lmc {
#define GEN_PASS_DEF_LMCSHARDCOMPLETE
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The sharding `value` has where it is defined: its own annotation, or
/// null when it has none.
Value definedSharding(Value value) {
  if (auto shard = value.getDefiningOp<shard::ShardOp>())
    if (!shard.getAnnotateForUsers())
      return shard.getSharding();
  for (Operation *user : value.getUsers())
    if (auto shard = dyn_cast<shard::ShardOp>(user))
      if (!shard.getAnnotateForUsers())
        return shard.getSharding();
  return nullptr;
}

/// The sharding some user already reads `value` with, or null.
Value usedSharding(Value value) {
  for (Operation *user : value.getUsers())
    if (auto shard = dyn_cast<shard::ShardOp>(user))
      if (shard.getAnnotateForUsers())
        return shard.getSharding();
  return nullptr;
}

/// True when `op` reads its iteration index (linalg.index: the one-hot
/// compare of cross-entropy, causal masks).
bool readsIterationIndex(Operation *op) {
  return op->getNumRegions() > 0 &&
         op->walk([](linalg::IndexOp) { return WalkResult::interrupt(); })
             .wasInterrupted();
}

/// The fix-ups of one function, in the order they must run: each later
/// one relies on the annotations the earlier ones left.
class Completion {
public:
  Completion(func::FuncOp func, StringRef grid)
      : func(func), grid(grid), b(func) {}

  /// Propagation writes some replicated shardings as an empty split list,
  /// which partitioning then rejects without a message (and the printer
  /// writes as text the parser rejects): one empty entry means the same.
  void normalizeEmptySplits() {
    func.walk([&](shard::ShardingOp sharding) {
      if (sharding.getSplitAxes().getAxes().empty())
        sharding.setSplitAxesAttr(shard::GridAxesArrayAttr::get(
            sharding.getContext(), {b.getDenseI16ArrayAttr({})}));
    });
  }

  /// An op that reads its iteration index would need each process's slice
  /// offset added to it, which upstream partitioning does not do (it
  /// produces invalid IR): such ops run replicated, on gathered operands.
  void replicateIndexReaders() {
    func.walk([&](Operation *op) {
      if (op->getParentOp() != func || !readsIterationIndex(op))
        return;
      b.setInsertionPoint(op);
      for (OpOperand &operand : op->getOpOperands()) {
        // Chained after the read it had: the value keeps its own sharding
        // everywhere else (an argument's decides the signature), and the
        // partitioner gathers it for this op alone.
        auto reader = operand.get().getDefiningOp<shard::ShardOp>();
        if (reader && reader.getAnnotateForUsers())
          operand.set(shard::ShardOp::create(b, op->getLoc(), reader,
                                             replicated(op->getLoc()),
                                             /*annotate_for_users=*/true));
      }
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (auto shard = dyn_cast<shard::ShardOp>(user))
            if (!shard.getAnnotateForUsers()) {
              b.setInsertionPoint(shard);
              shard.getShardingMutable().assign(replicated(op->getLoc()));
            }
    });
  }

  /// Arguments no op annotates (partitioning crashes on a bare one): those
  /// nothing reads, and those only read inside a region (a gather's table).
  void annotateBareArguments() {
    b.setInsertionPointToStart(&func.getBody().front());
    for (BlockArgument arg : func.getArguments())
      if (isa<RankedTensorType>(arg.getType()) && !definedSharding(arg) &&
          !usedSharding(arg))
        shard::ShardOp::create(b, arg.getLoc(), arg, replicated(arg.getLoc()),
                               /*annotate_for_users=*/true);
  }

  /// A tensor read inside a region (tensor.extract in a gather's body) is
  /// read whole, with global indices: it must not be split, and it is read
  /// through an annotation, as every tensor must be.
  LogicalResult keepRegionReadsWhole() {
    WalkResult captured = func.walk([&](Operation *op) {
      if (op->getParentOp() == func)
        return WalkResult::advance();
      for (Value operand : op->getOperands()) {
        if (!isa<RankedTensorType>(operand.getType()) ||
            operand.getParentRegion() != &func.getBody())
          continue;
        Value sharding = definedSharding(operand);
        if (!sharding)
          sharding = usedSharding(operand);
        auto splits = sharding
                          ? sharding.getDefiningOp<shard::ShardingOp>()
                                .getSplitAxes()
                                .getAxes()
                          : ArrayRef<shard::GridAxesAttr>{};
        if (llvm::any_of(splits, [](shard::GridAxesAttr axes) {
              return !axes.empty();
            })) {
          op->emitError("lmc cannot split a tensor that '")
              << op->getName()
              << "' reads inside a region (a gather's table, or a slice's "
                 "source that lmc-split-fused-projections could not cut into "
                 "parameters) yet; keep it whole with --shard";
          return WalkResult::interrupt();
        }
        Operation *outer = op;
        while (outer->getParentOp() != func)
          outer = outer->getParentOp();
        b.setInsertionPoint(outer);
        op->replaceUsesOfWith(
            operand, shard::ShardOp::create(b, op->getLoc(), operand,
                                            replicated(op->getLoc()),
                                            /*annotate_for_users=*/true));
      }
      return WalkResult::advance();
    });
    return failure(captured.wasInterrupted());
  }

  /// Every tensor an op defines gets a sharding of its own.
  void annotateResults() {
    func.walk([&](Operation *op) {
      if (isa<shard::ShardOp, shard::ShardingOp>(op) ||
          op->getParentOp() != func)
        return;
      for (Value result : op->getResults()) {
        if (!isa<RankedTensorType>(result.getType()) || definedSharding(result))
          continue;
        b.setInsertionPointAfter(op);
        auto annotated = shard::ShardOp::create(b, result.getLoc(), result,
                                                replicated(result.getLoc()));
        result.replaceAllUsesExcept(annotated, annotated);
      }
    });
  }

  /// Every tensor an op reads comes through a users' annotation; a direct
  /// read gets one with the sharding the value already has.
  void annotateOperands() {
    func.walk([&](Operation *op) {
      if (isa<shard::ShardOp, shard::ShardingOp>(op) ||
          op->getParentOp() != func)
        return;
      for (OpOperand &operand : op->getOpOperands()) {
        Value value = operand.get();
        auto reader = value.getDefiningOp<shard::ShardOp>();
        if (!isa<RankedTensorType>(value.getType()) ||
            (reader && reader.getAnnotateForUsers()))
          continue;
        b.setInsertionPoint(op);
        Value sharding = definedSharding(value);
        if (!sharding)
          sharding = usedSharding(value);
        // A copy here: the annotation it came from may come after `op`.
        sharding = sharding ? b.clone(*sharding.getDefiningOp())->getResult(0)
                            : replicated(op->getLoc());
        operand.set(shard::ShardOp::create(b, op->getLoc(), value, sharding,
                                           /*annotate_for_users=*/true));
      }
    });
  }

private:
  /// One empty split list: replicated whatever the rank (an empty list
  /// does not survive upstream's printer/parser round trip).
  Value replicated(Location loc) {
    return shard::ShardingOp::create(b, loc, grid,
                                     {b.getDenseI16ArrayAttr({})});
  }

  func::FuncOp func;
  StringRef grid;
  OpBuilder b;
};

struct ShardCompletePass : impl::LmcShardCompleteBase<ShardCompletePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto grids = func->getParentOfType<ModuleOp>().getOps<shard::GridOp>();
    if (grids.empty())
      return;
    Completion completion(func, (*grids.begin()).getSymName());
    completion.normalizeEmptySplits();
    completion.replicateIndexReaders();
    completion.annotateBareArguments();
    if (failed(completion.keepRegionReadsWhole()))
      return signalPassFailure();
    completion.annotateResults();
    completion.annotateOperands();
  }
};

} // namespace
} // namespace lmc
