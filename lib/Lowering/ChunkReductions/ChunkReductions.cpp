//===- ChunkReductions.cpp - Long sums to a scalar in fixed chunks --------===//
//
// A reduction of a whole tensor to one value (a gradient's squared norm,
// which the global-norm check and clipping need before any update) has no
// parallel dimension, so it ran on one thread however many the step had:
// on GPT-2 124M's two threads, 10 ms per step for the embedding's norm
// alone while the update beside it halved. Reduced in a fixed number of
// contiguous chunks (parallel) and then over the chunks, it shares the
// threads. The chunks depend on the tensor's size only, never on the
// thread count, so the sum's order, and every bit of it, is the same on
// any number of threads.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/Reductions.h"
#include "../LmcToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace lmc {
#define GEN_PASS_DEF_LMCCHUNKREDUCTIONS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Chunks a long reduction is cut into: enough for the threads of a
/// machine to share, few enough that each chunk's loop stays long.
constexpr int64_t kChunks = 64;

/// Rewrites a generic reducing all of its (identity-indexed) inputs to a
/// 0-d result as a [chunks, n / chunks] generic whose first dimension is
/// parallel, then a reduction of the chunks' values into the original
/// init. Returns false, leaving `op`, where it does not apply.
bool chunk(RewriterBase &rewriter, linalg::GenericOp op, int64_t minElements) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != 0 || op.getNumDpsInputs() == 0 ||
      op.hasIndexSemantics())
    return false;
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  if (resultType.getRank() != 0)
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!op.getMatchingIndexingMap(input).isIdentity())
      return false; // a broadcast operand: not one contiguous run
  FailureOr<SmallVector<Operation *>> combiners = outputCombiners(op);
  if (failed(combiners))
    return false;
  Operation *combine = combiners->front();
  int64_t elements = 1;
  for (int64_t size : sizes)
    elements *= size;
  int64_t chunks = largestDivisorAtMost(elements, kChunks);
  if (elements < minElements || chunks < 2)
    return false;

  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // Each input as [chunks, elements / chunks], row-major as stored.
  SmallVector<Value> chunked;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = cast<RankedTensorType>(input->get().getType());
    chunked.push_back(lowering::buildStaticReshape(
        rewriter, loc, input->get(),
        RankedTensorType::get({chunks, elements / chunks},
                              type.getElementType())));
  }
  auto partialType =
      RankedTensorType::get({chunks}, resultType.getElementType());
  Value partialInit = lowering::buildFilled(rewriter, loc, partialType,
                                            *arith::getNeutralElement(combine));
  AffineMap both = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap first = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  SmallVector<AffineMap> partialMaps(chunked.size(), both);
  partialMaps.push_back(first);
  auto partials = linalg::GenericOp::create(
      rewriter, loc, partialType, chunked, partialInit, partialMaps,
      {utils::IteratorType::parallel, utils::IteratorType::reduction});
  rewriter.cloneRegionBefore(op.getRegion(), partials.getRegion(),
                             partials.getRegion().end());
  // The chunks' values into the original init, with the op's combiner.
  AffineMap one = AffineMap::getMultiDimIdentityMap(1, ctx);
  auto total = linalg::GenericOp::create(
      rewriter, loc, resultType, partials.getResult(0), op.getDpsInits()[0],
      {one, AffineMap::get(1, 0, {}, ctx)}, {utils::IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        Block *body = op.getBody();
        Value out = body->getArgument(op.getNumDpsInputs());
        Value value = combine->getOperand(0) == out ? combine->getOperand(1)
                                                    : combine->getOperand(0);
        mapping.map(value, args[0]);
        mapping.map(out, args[1]);
        linalg::YieldOp::create(b, l, b.clone(*combine, mapping)->getResult(0));
      });
  rewriter.replaceOp(op, total.getResult(0));
  return true;
}

struct ChunkReductionsPass
    : public impl::LmcChunkReductionsBase<ChunkReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation()->walk(
        [&](linalg::GenericOp op) { reductions.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : reductions)
      chunk(rewriter, op, minElements);
  }
};

} // namespace
} // namespace lmc
