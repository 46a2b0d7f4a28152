//===- SplitReductions.cpp - reductions over few outputs in two steps -----===//
//
// lmc-linalg-to-gpu-loops gives each output element one thread that loops
// over the reduced dimensions. A reduction with few outputs (a bias
// gradient's sum over the batch, a squared norm for gradient clipping, a
// loss's sum to a scalar) would leave most of a GPU idle behind a few long
// serial loops; split, S·P threads compute partial results and P threads
// combine them. The combining generic is itself split again while its
// reduction is long.
//
//===----------------------------------------------------------------------===//

#include "SplitReductions.h"

#include "../Common/Reductions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace lmc {
namespace {

/// The fewest iterations one partial result reduces: below, a second kernel
/// costs more than the parallelism gains.
constexpr int64_t kMinChunk = 32;

/// Reductions this short stay in one thread per output.
constexpr int64_t kMaxSerial = 256;

/// Whether the fastest-varying dimension of `op`'s first input is reduced
/// (a row sum), rather than parallel (a column sum).
bool readsAlongReduction(linalg::GenericOp op) {
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (map.getNumResults() == 0)
    return false;
  auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
  return dim && dim.getPosition() >= op.getNumParallelLoops();
}

} // namespace

FailureOr<SplitReduction>
splitReduction(RewriterBase &rewriter, linalg::GenericOp op, int64_t threads) {
  unsigned numParallel = op.getNumParallelLoops();
  unsigned numLoops = op.getNumLoops();
  if (threads <= 0 || numParallel == numLoops || !op.hasPureBufferSemantics() ||
      op.getNumDpsInputs() == 0 || !isa<func::FuncOp>(op->getParentOp()))
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  for (OpOperand &init : op.getDpsInitsMutable())
    for (unsigned d = numParallel; d < numLoops; ++d)
      if (op.getMatchingIndexingMap(&init).isFunctionOfDim(d))
        return failure(); // an output indexed by a reduced dimension
  int64_t outputs = 1, reduced = 1;
  for (unsigned d = 0; d < numLoops; ++d)
    (d < numParallel ? outputs : reduced) *= sizes[d];
  if (outputs >= threads || reduced <= kMaxSerial)
    return failure();
  FailureOr<SmallVector<Operation *>> combiners = outputCombiners(op);
  if (failed(combiners))
    return failure();
  int64_t splits = largestDivisorAtMost(
      reduced, std::min<int64_t>(llvm::divideCeil(threads, outputs),
                                 reduced / kMinChunk));
  if (splits < 2)
    return failure();

  // The partials' threads: s (which partial) and the output's dimensions.
  // s goes innermost when the input is read along its reduced dimension,
  // so that neighbouring threads read neighbouring elements either way.
  MLIRContext *ctx = op.getContext();
  bool sInnermost = readsAlongReduction(op);
  unsigned sPos = sInnermost ? numParallel : 0;
  SmallVector<int64_t> threadSizes(sizes.begin(), sizes.begin() + numParallel);
  threadSizes.insert(threadSizes.begin() + sPos, splits);
  // The original dimensions as functions of the threads' indices and k
  // (the partial's own iterations, the last dimension): the reduced ones
  // delinearized from k * S + s.
  auto threadDim = [&](unsigned i) { // output dimension i
    return getAffineDimExpr(sInnermost ? i : i + 1, ctx);
  };
  AffineExpr linear = getAffineDimExpr(numParallel + 1, ctx) * splits +
                      getAffineDimExpr(sPos, ctx);
  SmallVector<AffineExpr> original;
  for (unsigned i = 0; i < numParallel; ++i)
    original.push_back(threadDim(i));
  int64_t stride = reduced;
  for (unsigned d = numParallel; d < numLoops; ++d) {
    stride /= sizes[d];
    AffineExpr index = stride == 1 ? linear : linear.floorDiv(stride);
    original.push_back(d == numParallel ? index : index % sizes[d]);
  }

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> partialShape = {splits};
  partialShape.append(sizes.begin(), sizes.begin() + numParallel);
  SmallVector<Value> partials, neutrals;
  for (auto [combiner, init] : llvm::zip(*combiners, op.getDpsInits())) {
    auto type = MemRefType::get(
        partialShape, cast<MemRefType>(init.getType()).getElementType());
    partials.push_back(memref::AllocOp::create(rewriter, loc, type));
    neutrals.push_back(arith::ConstantOp::create(
        rewriter, loc, *arith::getNeutralElement(combiner)));
  }

  // Each thread reduces its iterations from the neutral elements in
  // registers with the op's body and stores its partial results.
  SplitReduction split;
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> upper = llvm::map_to_vector(threadSizes, [&](int64_t n) {
    return Value(arith::ConstantIndexOp::create(rewriter, loc, n));
  });
  SmallVector<Value> zeros(upper.size(), zero), ones(upper.size(), one);
  split.partials = scf::ParallelOp::create(rewriter, loc, zeros, upper, ones);
  rewriter.setInsertionPoint(split.partials.getBody()->getTerminator());
  SmallVector<Value> threadIvs = split.partials.getInductionVars();
  Value chunk = arith::ConstantIndexOp::create(rewriter, loc, reduced / splits);
  auto iterations =
      scf::ForOp::create(rewriter, loc, zero, chunk, one, neutrals);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(iterations.getBody());
    SmallVector<Value> dims(threadIvs);
    dims.push_back(iterations.getInductionVar());
    // `expr` of the original dimensions, at this thread's iteration.
    auto at = [&](AffineExpr expr) -> Value {
      return affine::AffineApplyOp::create(
          rewriter, loc,
          AffineMap::get(numParallel + 2, 0, expr.replaceDims(original), ctx),
          dims);
    };
    Block *body = op.getBody();
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      SmallVector<Value> indices = llvm::map_to_vector(
          op.getMatchingIndexingMap(input).getResults(), at);
      mapping.map(body->getArgument(input->getOperandNumber()),
                  memref::LoadOp::create(rewriter, loc, input->get(), indices));
    }
    for (auto [arg, acc] :
         llvm::zip(body->getArguments().drop_front(op.getNumDpsInputs()),
                   iterations.getRegionIterArgs()))
      mapping.map(arg, acc);
    for (Operation &bodyOp : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) { // a one-hot
        mapping.map(index.getResult(),
                    at(getAffineDimExpr(index.getDim(), ctx)));
        continue;
      }
      rewriter.clone(bodyOp, mapping);
    }
    scf::YieldOp::create(
        rewriter, loc,
        llvm::map_to_vector(body->getTerminator()->getOperands(),
                            [&](Value v) { return mapping.lookup(v); }));
  }
  SmallVector<Value> partialIndex = {threadIvs[sPos]};
  for (unsigned i = 0; i < numParallel; ++i)
    partialIndex.push_back(threadIvs[sInnermost ? i : i + 1]);
  for (auto [partial, result] : llvm::zip(partials, iterations.getResults()))
    memref::StoreOp::create(rewriter, loc, result, partial, partialIndex);
  rewriter.setInsertionPoint(op);

  // The outputs combine their partials: out = out ⊕ partial[s].
  SmallVector<AffineMap> combineMaps;
  SmallVector<AffineExpr> partialAt = {getAffineDimExpr(numParallel, ctx)};
  for (unsigned i = 0; i < numParallel; ++i)
    partialAt.push_back(getAffineDimExpr(i, ctx));
  for (size_t i = 0; i < partials.size(); ++i)
    combineMaps.push_back(AffineMap::get(numParallel + 1, 0, partialAt, ctx));
  for (OpOperand &init : op.getDpsInitsMutable())
    combineMaps.push_back(
        AffineMap::get(numParallel + 1, 0,
                       op.getMatchingIndexingMap(&init).getResults(), ctx));
  SmallVector<utils::IteratorType> combineIterators(
      numParallel, utils::IteratorType::parallel);
  combineIterators.push_back(utils::IteratorType::reduction);
  split.combine = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, partials, op.getDpsInits(), combineMaps,
      combineIterators, [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        SmallVector<Value> results;
        for (auto [i, combiner] : llvm::enumerate(*combiners)) {
          OperationState state(bodyLoc, combiner->getName(),
                               ValueRange{args[partials.size() + i], args[i]},
                               combiner->getResultTypes(),
                               combiner->getAttrs());
          results.push_back(b.create(state)->getResult(0));
        }
        linalg::YieldOp::create(b, bodyLoc, results);
      });
  for (Value partial : partials)
    memref::DeallocOp::create(rewriter, loc, partial);
  rewriter.eraseOp(op);
  return split;
}

} // namespace lmc
