//===- LinalgToGpuLoops.cpp - linalg on buffers to GPU-mapped loops -------===//
//
// One kernel per linalg op: its parallel dimensions, moved first, become one
// scf.parallel loop collapsed to a single dimension and tiled into blocks of
// threads (see Passes.td). Reductions stay scf.for loops inside a thread, so
// every output element has one owner and no atomics are needed; one with few
// outputs and a long reduction is first split in two (SplitReductions.h).
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/Copies.h"
#include "../Common/RuntimeCalls.h"
#include "IndependentLoops.h"
#include "KernelScalarReads.h"
#include "OneThreadKernels.h"
#include "SplitReductions.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace lmc {
#define GEN_PASS_DEF_LMCLINALGTOGPULOOPS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The runtime's copy into a step buffer (lmc/runtime/kernels.h).
constexpr llvm::StringLiteral kCopyIn = "lmc_rt_copy_in";

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
  if (failed(
          gpu::setMappingAttr(blocks, {mapTo(ctx, gpu::Processor::BlockX)})) ||
      failed(
          gpu::setMappingAttr(threads, {mapTo(ctx, gpu::Processor::ThreadX)})))
    return blocks->emitOpError("cannot be mapped to GPU blocks and threads");
  return success();
}

/// Globals (constant tables: a causal mask, position indices) live in the
/// host binary, where kernels cannot read them: each step copies the ones
/// it uses into a buffer of its own allocator with `lmc_rt_copy_in` (a
/// copy in stream order on the GPU, memcpy on the CPU) and frees it before
/// returning.
LogicalResult copyGlobalsForKernels(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<memref::GetGlobalOp> reads;
  func.walk([&](memref::GetGlobalOp read) { reads.push_back(read); });
  if (reads.empty())
    return success();
  Type ptr = LLVM::LLVMPointerType::get(rewriter.getContext());
  func::FuncOp copyIn = declareRuntimeFunction(
      func->getParentOfType<ModuleOp>(), rewriter, kCopyIn,
      rewriter.getFunctionType({ptr, ptr, rewriter.getI64Type()}, {}));
  for (memref::GetGlobalOp read : reads) {
    if (read->getParentOp() != func.getOperation() ||
        !func.getBody().hasOneBlock())
      return read.emitOpError(
          "reads a global inside a nested region; the GPU lowering copies "
          "globals at the start of a step only");
    Location loc = read.getLoc();
    MemRefType type = read.getType();
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        read->getUses(), [](OpOperand &use) { return &use; });
    rewriter.setInsertionPointAfter(read);
    Value copy = memref::AllocOp::create(rewriter, loc, type,
                                         rewriter.getI64IntegerAttr(64));
    // A buffer holds each element in whole bytes: an i1 (a folded
    // boolean mask) takes one, not an eighth.
    int64_t bytes =
        type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    func::CallOp::create(
        rewriter, loc, copyIn,
        ValueRange{bufferPointer(rewriter, loc, copy),
                   bufferPointer(rewriter, loc, read),
                   arith::ConstantIntOp::create(rewriter, loc, bytes, 64)});
    for (OpOperand *use : uses)
      rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(copy); });
    func.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      memref::DeallocOp::create(rewriter, loc, copy);
    });
  }
  return success();
}

/// Whether `op`, at function level, reads or writes memory itself (outside
/// a kernel): what the host must not do while kernels run ahead.
bool touchesMemoryOnHost(Operation *op) {
  if (isa<scf::ParallelOp, memref::AllocOp, memref::DeallocOp,
          memref::GetGlobalOp, func::CallOp, func::ReturnOp>(op))
    return false;
  bool touches = false;
  op->walk([&](Operation *nested) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp>(nested))
      touches = true;
  });
  return touches;
}

/// Loop nests built before bufferization (the embedding gradient's
/// scatter-add over its updates) become kernels over their independent
/// loops (IndependentLoops.h), appended to `kernels`, or else run on one
/// thread.
void loopNestsToKernels(RewriterBase &rewriter, func::FuncOp func,
                        SmallVectorImpl<scf::ParallelOp> &kernels) {
  for (Operation &op : llvm::make_early_inc_range(func.getOps())) {
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop || loop->getNumResults() != 0 ||
        loop->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      continue;
    if (FailureOr<scf::ParallelOp> parallel =
            parallelizeIndependentLoops(rewriter, loop);
        succeeded(parallel))
      kernels.push_back(*parallel);
    else
      runOnOneThread(rewriter, loop);
  }
}

/// Nothing at function level may touch memory, so that the host can run
/// ahead of the GPU until the step returns.
LogicalResult keepMemoryInKernels(func::FuncOp func) {
  for (Operation &op : func.getOps())
    if (touchesMemoryOnHost(&op))
      return op.emitOpError("reads or writes memory outside the GPU's "
                            "kernels; the CUDA target cannot order it with "
                            "them");
  return success();
}

struct LinalgToGpuLoopsPass
    : public impl::LmcLinalgToGpuLoopsBase<LinalgToGpuLoopsPass> {
  using Base::Base;

  /// Lowers `op` to the parallel loops of one kernel, or of several when
  /// its reduction is split; appends them to `kernels`.
  LogicalResult lowerToKernels(RewriterBase &rewriter, linalg::LinalgOp op,
                               SmallVectorImpl<scf::ParallelOp> &kernels) {
    FailureOr<linalg::GenericOp> generic = parallelFirst(rewriter, op);
    if (failed(generic))
      return failure();
    if (FailureOr<SplitReduction> split =
            splitReduction(rewriter, *generic, reductionThreads);
        succeeded(split)) {
      kernels.push_back(split->partials);
      // Split again while it is long.
      return lowerToKernels(rewriter, split->combine, kernels);
    }
    // Without a parallel dimension (a short sum to a scalar): one thread.
    if (generic->getNumParallelLoops() == 0 &&
        isa<func::FuncOp>((*generic)->getParentOp()))
      runOnOneThread(rewriter, *generic);
    rewriter.setInsertionPoint(*generic);
    FailureOr<linalg::LinalgLoops> loops =
        linalg::linalgOpToParallelLoops(rewriter, *generic);
    if (failed(loops))
      return generic->emitOpError("cannot be lowered to parallel loops");
    rewriter.eraseOp(*generic);
    if (!loops->empty())
      if (auto parallel = dyn_cast<scf::ParallelOp>(loops->front()))
        kernels.push_back(parallel);
    return success();
  }

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation()->emitError("block-size must be in [1, 1024], got ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      if (failed(copyGlobalsForKernels(rewriter, func)))
        return signalPassFailure();
      // Copies between buffers (into a step's results) become kernels
      // like the rest.
      copiesToLinalg(rewriter, func, [](memref::CopyOp) { return true; });
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    SmallVector<scf::ParallelOp> kernels;
    for (linalg::LinalgOp op : ops)
      if (failed(lowerToKernels(rewriter, op, kernels)))
        return signalPassFailure();
    for (func::FuncOp func : funcs)
      loopNestsToKernels(rewriter, func, kernels);
    for (scf::ParallelOp loop : kernels)
      if (failed(mapToBlocksAndThreads(rewriter, loop, blockSize)))
        return signalPassFailure();
    for (func::FuncOp func : funcs) {
      readScalarsInKernels(rewriter, func);
      scalarMovesToKernels(rewriter, func);
      mergeOneThreadKernels(rewriter, func);
      if (failed(keepMemoryInKernels(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace lmc
