//===- SideBySide.cpp - one loop for a producer and its consumer ----------===//

#include "SideBySide.h"

#include "GenericOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace lmc {
namespace {

/// Keeps fused bodies small enough for LLVM to vectorize well.
constexpr unsigned kMaxFusedOps = 64;

/// An all-parallel generic on tensors whose body never reads its outputs.
bool isPureElementwise(linalg::GenericOp op) {
  return isParallelOnTensors(op) &&
         llvm::none_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
           return op.payloadUsesValueFromOperand(&init);
         });
}

/// Whether `producer` and `consumer` can become one loop: both pure
/// elementwise over the same loops, every producer result written and read
/// in place, and every other reader after the consumer in its block.
bool fusesSideBySide(linalg::GenericOp producer, linalg::GenericOp consumer) {
  if (producer->getBlock() != consumer->getBlock() ||
      !isPureElementwise(producer) || !isPureElementwise(consumer) ||
      producer.getStaticLoopRanges() != consumer.getStaticLoopRanges() ||
      bodySize(producer) + bodySize(consumer) > kMaxFusedOps)
    return false;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get().getDefiningOp() == producer &&
        !consumer.getMatchingIndexingMap(input).isIdentity())
      return false;
  // A consumer writing into a producer's result would become an op
  // writing into its own.
  if (llvm::any_of(consumer.getDpsInits(), [&](Value init) {
        return init.getDefiningOp() == producer;
      }))
    return false;
  for (OpResult result : producer->getResults()) {
    if (!producer.getIndexingMapMatchingResult(result).isIdentity())
      return false;
    for (Operation *user : result.getUsers())
      if (user != consumer && (user->getBlock() != consumer->getBlock() ||
                               !consumer->isBeforeInBlock(user)))
        return false;
  }
  return true;
}

/// Builds the op that computes `producer` and then `consumer` in one
/// body, in the consumer's place, and replaces both.
void fuse(linalg::GenericOp producer, linalg::GenericOp consumer,
          PatternRewriter &rewriter) {
  // The producer's results other ops still read stay results.
  SmallVector<OpResult> keptResults;
  for (OpResult result : producer->getResults())
    if (llvm::any_of(result.getUsers(),
                     [&](Operation *user) { return user != consumer; }))
      keptResults.push_back(result);

  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : producer.getDpsInputOperands()) {
    inputs.push_back(input->get());
    maps.push_back(producer.getMatchingIndexingMap(input));
  }
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input->get().getDefiningOp() == producer)
      continue;
    inputs.push_back(input->get());
    maps.push_back(consumer.getMatchingIndexingMap(input));
  }
  for (OpResult result : keptResults) {
    OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
    inits.push_back(init->get());
    maps.push_back(producer.getMatchingIndexingMap(init));
  }
  for (OpOperand &init : consumer.getDpsInitsMutable()) {
    inits.push_back(init.get());
    maps.push_back(consumer.getMatchingIndexingMap(&init));
  }

  SmallVector<Type> resultTypes;
  for (OpResult result : keptResults)
    resultTypes.push_back(result.getType());
  llvm::append_range(resultTypes, consumer->getResultTypes());

  auto buildBody = [&](OpBuilder &builder, Location, ValueRange args) {
    IRMapping mapping;
    Block &producerBody = producer.getRegion().front();
    Block &consumerBody = consumer.getRegion().front();
    unsigned next = 0;
    // The producer's inputs, then its body; its outputs are never read.
    for (unsigned i = 0; i < producer.getNumDpsInputs(); ++i)
      mapping.map(producerBody.getArgument(i), args[next++]);
    for (Operation &op : producerBody.without_terminator())
      builder.clone(op, mapping);
    auto producerYield = cast<linalg::YieldOp>(producerBody.getTerminator());
    SmallVector<Value> producerValues =
        llvm::map_to_vector(producerYield.getValues(), [&](Value value) {
          return mapping.lookupOrDefault(value);
        });
    // The consumer reads the producer's values directly.
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      BlockArgument arg = consumer.getMatchingBlockArgument(input);
      if (auto result = dyn_cast<OpResult>(input->get());
          result && result.getOwner() == producer)
        mapping.map(arg, producerValues[result.getResultNumber()]);
      else
        mapping.map(arg, args[next++]);
    }
    next += keptResults.size();
    for (OpOperand &init : consumer.getDpsInitsMutable())
      mapping.map(consumer.getMatchingBlockArgument(&init), args[next++]);
    for (Operation &op : consumerBody.without_terminator())
      builder.clone(op, mapping);
    SmallVector<Value> yielded;
    for (OpResult result : keptResults)
      yielded.push_back(producerValues[result.getResultNumber()]);
    for (Value value :
         cast<linalg::YieldOp>(consumerBody.getTerminator()).getValues())
      yielded.push_back(mapping.lookupOrDefault(value));
    linalg::YieldOp::create(builder, consumer.getLoc(), yielded);
  };
  rewriter.setInsertionPoint(consumer);
  auto fused = linalg::GenericOp::create(
      rewriter, consumer.getLoc(), resultTypes, inputs, inits, maps,
      consumer.getIteratorTypesArray(), buildBody);
  for (auto [result, replacement] : llvm::zip(
           keptResults, fused->getResults().take_front(keptResults.size())))
    rewriter.replaceAllUsesWith(result, replacement);
  rewriter.replaceOp(consumer,
                     fused->getResults().drop_front(keptResults.size()));
  rewriter.eraseOp(producer);
}

struct FuseSideBySide : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      auto producer = input->get().getDefiningOp<linalg::GenericOp>();
      if (producer && !producer->hasOneUse() &&
          fusesSideBySide(producer, consumer)) {
        fuse(producer, consumer, rewriter);
        return success();
      }
    }
    return failure();
  }
};

} // namespace

void populateSideBySideFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseSideBySide>(patterns.getContext());
}

} // namespace lmc
