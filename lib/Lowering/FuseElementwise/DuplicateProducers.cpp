//===- DuplicateProducers.cpp - copy cheap producers into consumers ------===//

#include "DuplicateProducers.h"

#include "GenericOps.h"

#include "../Common/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace lmc {
namespace {

/// Ops allowed in a recomputed body: arithmetic, math functions and loop
/// indices (no memory, no regions).
bool isDuplicable(Operation &op) {
  return isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
         isa<linalg::IndexOp>(op);
}

/// An all-parallel linalg.generic with one result, on tensors, whose body
/// has at most `maxOps` recomputable ops.
bool isCheapElementwise(linalg::GenericOp op, unsigned maxOps) {
  if (op.getNumDpsInits() != 1 || !isParallelOnTensors(op))
    return false;
  return bodySize(op) <= maxOps + 1 &&
         llvm::all_of(op.getRegion().front().without_terminator(),
                      isDuplicable);
}

/// Whether `input` of `op` is read in full (a permutation of the loops),
/// rather than broadcast along some of them.
bool readsInFull(linalg::GenericOp op, OpOperand *input) {
  return op.getMatchingIndexingMap(input).isPermutation();
}

/// A cheap broadcast: every input is smaller than the iteration space, and
/// the body is a few arith ops (a conversion, a compare).
bool isCheapBroadcast(linalg::GenericOp op) {
  constexpr unsigned kMaxBodyOps = 4;
  if (!isCheapElementwise(op, kMaxBodyOps))
    return false;
  return llvm::none_of(
             op.getDpsInputOperands(),
             [&](OpOperand *input) { return readsInFull(op, input); }) &&
         llvm::all_of(op.getRegion().front().without_terminator(),
                      [](Operation &inner) {
                        return !isa<math::MathDialect>(inner.getDialect());
                      });
}

/// Whether fusion can take `use` of a producer into its consumer.
bool isFusableUse(OpOperand &use) {
  return isa<linalg::GenericOp>(use.getOwner()) &&
         linalg::areElementwiseOpsFusable(&use);
}

/// Replaces `use` by a copy of its producer placed in front of the user.
void copyProducerFor(OpBuilder &builder, Operation *producer, OpOperand &use) {
  builder.setInsertionPoint(use.getOwner());
  use.set(builder.clone(*producer)->getResult(0));
}

/// The distinct tensors `op` reads in full.
llvm::SmallSetVector<Value, 8> fullReads(linalg::GenericOp op) {
  llvm::SmallSetVector<Value, 8> reads;
  for (OpOperand *input : op.getDpsInputOperands())
    if (readsInFull(op, input))
      reads.insert(input->get());
  return reads;
}

/// A body of float multiplies, adds, subtractions and negations only.
bool plainArithmetic(linalg::GenericOp op) {
  return llvm::all_of(
      op.getRegion().front().without_terminator(), [](Operation &inner) {
        return isa<arith::MulFOp, arith::AddFOp, arith::SubFOp, arith::NegFOp>(
            inner);
      });
}

/// A reduction whose every output is a float sum.
bool sumsOnly(linalg::GenericOp op) {
  FailureOr<SmallVector<Operation *>> combiners = outputCombiners(op);
  return succeeded(combiners) &&
         llvm::all_of(*combiners, [](Operation *combiner) {
           return isa<arith::AddFOp>(combiner);
         });
}

} // namespace

bool duplicateBroadcasts(Operation *root) {
  SmallVector<linalg::GenericOp> broadcasts;
  root->walk([&](linalg::GenericOp op) {
    if (!op->hasOneUse() && !op->use_empty() && isCheapBroadcast(op))
      broadcasts.push_back(op);
  });
  bool changed = false;
  OpBuilder builder(root->getContext());
  for (linalg::GenericOp op : broadcasts) {
    SmallVector<OpOperand *> fusable;
    for (OpOperand &use : op->getUses())
      if (isFusableUse(use))
        fusable.push_back(&use);
    // The original stays with the first consumer when all are fusable.
    ArrayRef<OpOperand *> copied(fusable);
    if (llvm::range_size(op->getUses()) == fusable.size())
      copied = copied.drop_front();
    for (OpOperand *use : copied)
      copyProducerFor(builder, op, *use);
    changed |= !copied.empty();
  }
  return changed;
}

bool duplicateIntoConsumers(Operation *root, bool intoSums) {
  // Bounds on the recomputation: the producer's own work, and how big a
  // consumer may grow by absorbing producers.
  constexpr unsigned kMaxProducerOps = 8;
  constexpr unsigned kMaxConsumerOps = 48;
  SmallVector<linalg::GenericOp> producers;
  root->walk([&](linalg::GenericOp op) {
    if (!op->hasOneUse() && !op->use_empty() &&
        isCheapElementwise(op, kMaxProducerOps))
      producers.push_back(op);
  });
  // A consumer changed this round is judged again in the next, after
  // fusion has settled its operands.
  llvm::SmallPtrSet<Operation *, 16> touched;
  bool changed = false;
  OpBuilder builder(root->getContext());
  for (linalg::GenericOp producer : producers) {
    if (touched.contains(producer))
      continue;
    Value result = producer->getResult(0);
    llvm::SmallSetVector<Value, 8> producerReads = fullReads(producer);
    bool worthIt = llvm::all_of(producer->getUses(), [&](OpOperand &use) {
      if (!isFusableUse(use) || touched.contains(use.getOwner()))
        return false;
      // Into reductions only plain arithmetic, and only into sums: LLVM
      // vectorizes a max or sum reduction only while its loop body stays
      // simple (a select folded into a row maximum made it scalar); a
      // product summed (layer norm's dY * gamma, read by its row sums and
      // its input gradient) stays vectorized and is not written out.
      auto consumer = cast<linalg::GenericOp>(use.getOwner());
      if ((consumer.getNumReductionLoops() != 0 &&
           !(intoSums && plainArithmetic(producer) && sumsOnly(consumer))) ||
          bodySize(consumer) + bodySize(producer) > kMaxConsumerOps)
        return false;
      llvm::SmallSetVector<Value, 8> reads = fullReads(consumer);
      size_t before = reads.size();
      reads.remove(result);
      reads.insert(producerReads.begin(), producerReads.end());
      return reads.size() <= before;
    });
    if (!worthIt)
      continue;
    for (OpOperand &use : llvm::make_early_inc_range(producer->getUses())) {
      touched.insert(use.getOwner());
      copyProducerFor(builder, producer, use);
    }
    producer->erase();
    changed = true;
  }
  return changed;
}

} // namespace lmc
