//===- BucketAllReduces.cpp - one collective for a step's scalar sums -----===//
//
// A tensor-parallel step all-reduces one partial sum of squares per split
// parameter for the gradient norm: three 4-byte collectives for an MLP,
// each a full round of latency. They are independent of each other, so the
// pure ops computing the later ones can move up and the sums travel as one
// vector (see Passes.td). First, partial sums added after their
// all-reduces (attention's input gradient from q, k and v) are added before
// one all-reduce.
//
//===----------------------------------------------------------------------===//

#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace lmc {
#define GEN_PASS_DEF_LMCBUCKETALLREDUCES
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

bool isScalarSum(shard::AllReduceOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
  return type && type.getRank() == 0 && type.getElementType().isF32();
}

bool sameCollective(shard::AllReduceOp a, shard::AllReduceOp b) {
  return a.getGridAttr() == b.getGridAttr() &&
         a.getGridAxesAttr() == b.getGridAxesAttr() &&
         a.getReductionAttr() == b.getReductionAttr();
}

/// `value`'s all-reduce (a sum) when `value` is its only use's result.
shard::AllReduceOp soleSumOf(Value value) {
  auto op = value.getDefiningOp<shard::AllReduceOp>();
  if (!op || !op->hasOneUse() ||
      op.getReduction() != shard::ReductionKind::Sum)
    return nullptr;
  return op;
}

/// reshape(all_reduce(x)) → all_reduce(reshape(x)): the reshapes around a
/// partitioned matmul stand between its all-reduce and the sum below.
template <typename ReshapeOp>
struct SinkAllReduceBelowReshape : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    shard::AllReduceOp sum = soleSumOf(reshape.getSrc());
    if (!sum)
      return failure();
    Operation *reshaped = rewriter.clone(*reshape);
    reshaped->setOperand(0, sum.getInput());
    Operation *moved = rewriter.clone(*sum);
    moved->setOperand(0, reshaped->getResult(0));
    moved->getResult(0).setType(reshape.getType());
    rewriter.replaceOp(reshape, moved->getResults());
    rewriter.eraseOp(sum);
    return success();
  }
};

/// all_reduce(a) + all_reduce(b) → all_reduce(a + b) for an elementwise
/// linalg.generic add: one collective where there were two.
struct AddBeforeAllReduce : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp add,
                                PatternRewriter &rewriter) const override {
    if (add.getNumDpsInputs() != 2 || add->getNumResults() != 1 ||
        add.getNumParallelLoops() != add.getNumLoops() ||
        !llvm::all_of(add.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return failure();
    Block &body = add.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    auto addf = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
    if (!addf || &body.front() != addf.getOperation() ||
        !llvm::is_contained(addf->getOperands(), body.getArgument(0)) ||
        !llvm::is_contained(addf->getOperands(), body.getArgument(1)))
      return failure();
    shard::AllReduceOp lhs = soleSumOf(add.getDpsInputs()[0]);
    shard::AllReduceOp rhs = soleSumOf(add.getDpsInputs()[1]);
    if (!lhs || !rhs || lhs == rhs || !sameCollective(lhs, rhs))
      return failure();
    Operation *partial = rewriter.clone(*add);
    partial->setOperand(0, lhs.getInput());
    partial->setOperand(1, rhs.getInput());
    Operation *sum = rewriter.clone(*lhs);
    sum->setOperand(0, partial->getResult(0));
    rewriter.replaceOp(add, sum->getResults());
    rewriter.eraseOp(lhs);
    rewriter.eraseOp(rhs);
    return success();
  }
};

/// Shard ops that exchange data between processes: every process must
/// run them in the same order, so none moves.
bool isCommunication(Operation *op) {
  return isa<shard::ShardDialect>(op->getDialect()) &&
         !isa<shard::ProcessLinearIndexOp, shard::ProcessMultiIndexOp,
              shard::GridShapeOp, shard::NeighborsLinearIndicesOp>(op);
}

/// The ops of `first`'s block after `first` that `value` is computed from
/// (operands and values their regions read), in block order; failure when
/// `value` depends on `first` or on another collective (which must not
/// move, and whose later group members' results are not available earlier)
/// or when one of the ops has memory effects.
FailureOr<SmallVector<Operation *>> sliceAfter(Operation *first, Value value) {
  Block *block = first->getBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (def == first)
      return failure(); // reads the group's first sum
    if (!def || def->getBlock() != block || !first->isBeforeInBlock(def) ||
        slice.contains(def))
      continue;
    if (!isPure(def) || isCommunication(def))
      return failure();
    slice.insert(def);
    llvm::append_range(worklist, def->getOperands());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(def->getRegions(), captured);
    llvm::append_range(worklist, captured.getArrayRef());
  }
  SmallVector<Operation *> ordered = slice.takeVector();
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ordered;
}

/// Replaces the group's all-reduces by one over a vector of their inputs,
/// at the place of the first.
void merge(RewriterBase &rewriter, ArrayRef<shard::AllReduceOp> group) {
  shard::AllReduceOp first = group.front();
  Location loc = first.getLoc();
  rewriter.setInsertionPoint(first);
  SmallVector<Value> scalars;
  for (shard::AllReduceOp op : group)
    scalars.push_back(
        tensor::ExtractOp::create(rewriter, loc, op.getInput(), ValueRange{}));
  auto vectorType = RankedTensorType::get({int64_t(group.size())},
                                          rewriter.getF32Type());
  Value vector =
      tensor::FromElementsOp::create(rewriter, loc, vectorType, scalars);
  Operation *merged = rewriter.clone(*first);
  merged->setOperand(0, vector);
  merged->getResult(0).setType(vectorType);
  for (auto [i, member] : llvm::enumerate(group)) {
    shard::AllReduceOp op = member;
    Value index = arith::ConstantIndexOp::create(rewriter, loc, i);
    Value sum = tensor::ExtractOp::create(rewriter, loc, merged->getResult(0),
                                          index);
    rewriter.replaceOp(op, tensor::FromElementsOp::create(
                               rewriter, loc, op.getResult().getType(), sum));
  }
}

struct BucketAllReducesPass
    : public impl::LmcBucketAllReducesBase<BucketAllReducesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkAllReduceBelowReshape<tensor::ExpandShapeOp>,
                 SinkAllReduceBelowReshape<tensor::CollapseShapeOp>,
                 AddBeforeAllReduce>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      SmallVector<shard::AllReduceOp> pending;
      for (auto op : block->getOps<shard::AllReduceOp>())
        if (isScalarSum(op))
          pending.push_back(op);
      while (pending.size() > 1) {
        SmallVector<shard::AllReduceOp> group = {pending.front()};
        SmallVector<shard::AllReduceOp> rest;
        for (shard::AllReduceOp candidate : ArrayRef(pending).drop_front()) {
          FailureOr<SmallVector<Operation *>> slice = failure();
          if (sameCollective(group.front(), candidate))
            slice = sliceAfter(group.front(), candidate.getInput());
          if (failed(slice)) {
            rest.push_back(candidate);
            continue;
          }
          // The slice reads no result of the group (those are after the
          // first member, and collectives stop a slice), so it can run
          // before the first member.
          for (Operation *op : *slice)
            op->moveBefore(group.front());
          group.push_back(candidate);
        }
        if (group.size() > 1)
          merge(rewriter, group);
        pending = std::move(rest);
      }
    }
  }
};

} // namespace
} // namespace lmc
