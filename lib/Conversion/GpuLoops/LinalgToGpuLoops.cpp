//===- LinalgToGpuLoops.cpp - linalg on buffers to GPU-mapped loops -------===//
//
// One kernel per linalg op: its parallel dimensions, moved first, become one
// scf.parallel loop collapsed to a single dimension and tiled into blocks of
// threads (see Passes.td). Reductions stay scf.for loops inside a thread, so
// every output element has one owner and no atomics are needed.
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace lmc {
#define GEN_PASS_DEF_LMCLINALGTOGPULOOPS
#include "lmc/Conversion/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// `op` as a linalg.generic whose parallel dimensions come first (in their
/// order), then its reductions.
FailureOr<linalg::GenericOp> parallelFirst(RewriterBase &rewriter,
                                           linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op->emitOpError("cannot be generalized for the GPU");
    generic = *generalized;
  }
  SmallVector<unsigned> order;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  for (bool parallel : {true, false})
    for (auto [i, iterator] : llvm::enumerate(iterators))
      if ((iterator == utils::IteratorType::parallel) == parallel)
        order.push_back(i);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return generic;
  rewriter.setInsertionPoint(generic);
  return linalg::interchangeGenericOp(rewriter, generic, order);
}

gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *ctx, gpu::Processor p) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  return gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity);
}

/// Collapses `loop` to one dimension and splits it into blocks of
/// `blockSize` threads.
LogicalResult mapToBlocksAndThreads(RewriterBase &rewriter,
                                    scf::ParallelOp loop, int64_t blockSize) {
  MLIRContext *ctx = loop.getContext();
  if (loop.getNumLoops() > 1) {
    std::vector<unsigned> all(loop.getNumLoops());
    std::iota(all.begin(), all.end(), 0);
    // The collapsed loop replaces `loop`, after the index arithmetic it
    // inserts in front of it.
    Location loc = loop.getLoc();
    Block *block = loop->getBlock();
    Operation *before = loop->getPrevNode();
    rewriter.setInsertionPoint(loop);
    collapseParallelLoops(rewriter, loop, {all});
    auto after = before ? std::next(before->getIterator()) : block->begin();
    loop = nullptr;
    for (Operation &op : llvm::make_range(after, block->end()))
      if ((loop = dyn_cast<scf::ParallelOp>(op)))
        break;
    if (!loop)
      return emitError(loc, "collapsing the parallel loop lost it");
  }
  auto [blocks, threads] =
      scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
  if (failed(gpu::setMappingAttr(blocks,
                                 {mapTo(ctx, gpu::Processor::BlockX)})) ||
      failed(gpu::setMappingAttr(threads,
                                 {mapTo(ctx, gpu::Processor::ThreadX)})))
    return blocks->emitOpError("cannot be mapped to GPU blocks and threads");
  return success();
}

/// Globals (constant tables: a causal mask, position indices) live in the
/// host binary, where kernels cannot read them: each step copies the ones
/// it uses into a buffer of its own allocator, which the GPU reaches, and
/// frees it before returning.
LogicalResult copyGlobalsForKernels(RewriterBase &rewriter,
                                    func::FuncOp func) {
  SmallVector<memref::GetGlobalOp> reads;
  func.walk([&](memref::GetGlobalOp read) { reads.push_back(read); });
  for (memref::GetGlobalOp read : reads) {
    if (read->getParentOp() != func.getOperation() ||
        !func.getBody().hasOneBlock())
      return read.emitOpError(
          "reads a global inside a nested region; the GPU lowering copies "
          "globals at the start of a step only");
    Location loc = read.getLoc();
    rewriter.setInsertionPointAfter(read);
    Value copy = memref::AllocOp::create(rewriter, loc, read.getType(),
                                         rewriter.getI64IntegerAttr(64));
    auto copyOp = memref::CopyOp::create(rewriter, loc, read, copy);
    rewriter.replaceAllUsesExcept(read, copy, copyOp);
    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      memref::DeallocOp::create(rewriter, loc, copy);
    });
  }
  return success();
}

struct LinalgToGpuLoops
    : public impl::LmcLinalgToGpuLoopsBase<LinalgToGpuLoops> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation()->emitError("block-size must be in [1, 1024], got ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() &&
          failed(copyGlobalsForKernels(rewriter, func)))
        return signalPassFailure();
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    SmallVector<scf::ParallelOp> kernels;
    for (linalg::LinalgOp op : ops) {
      FailureOr<linalg::GenericOp> generic = parallelFirst(rewriter, op);
      if (failed(generic))
        return signalPassFailure();
      rewriter.setInsertionPoint(*generic);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, *generic);
      if (failed(loops)) {
        generic->emitOpError("cannot be lowered to parallel loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(*generic);
      if (!loops->empty())
        if (auto parallel = dyn_cast<scf::ParallelOp>(loops->front()))
          kernels.push_back(parallel);
    }
    for (scf::ParallelOp loop : kernels)
      if (failed(mapToBlocksAndThreads(rewriter, loop, blockSize)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace lmc
