//===- OneThreadKernels.cpp - kernels of one GPU thread -------------------===//

#include "OneThreadKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace lmc {
namespace {

/// Whether `op` is a kernel runOnOneThread made.
bool isOneThreadKernel(Operation *op) {
  auto loop = dyn_cast<scf::ParallelOp>(op);
  if (!loop || loop.getNumLoops() != 1 ||
      !matchPattern(loop.getLowerBound()[0], m_Zero()) ||
      !matchPattern(loop.getUpperBound()[0], m_One()) ||
      !matchPattern(loop.getStep()[0], m_One()))
    return false;
  auto mapping = loop->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  auto dim = mapping && mapping.size() == 1
                 ? dyn_cast<gpu::ParallelLoopDimMappingAttr>(mapping[0])
                 : nullptr;
  return dim && dim.getProcessor() == gpu::Processor::BlockX;
}

/// Moves `run` (function-level loads and stores of single elements, the
/// allocations and pure ops between them) into one one-thread kernel: the
/// allocations and the pure ops that read nothing the run loads go in
/// front of it. Leaves it when a value it loads is used after it.
void moveScalarRunToKernel(RewriterBase &rewriter, ArrayRef<Operation *> run) {
  llvm::SmallPtrSet<Operation *, 16> inKernel;
  for (Operation *op : run) {
    bool readsRun = llvm::any_of(op->getOperands(), [&](Value v) {
      return inKernel.contains(v.getDefiningOp());
    });
    if (isa<memref::LoadOp, memref::StoreOp>(op) || readsRun)
      inKernel.insert(op);
  }
  for (Operation *op : inKernel)
    for (Operation *user : op->getUsers())
      if (!inKernel.contains(user))
        return;
  Operation *first = nullptr;
  for (Operation *op : run)
    if (inKernel.contains(op) && !first)
      first = op;
  for (Operation *op : run)
    if (!inKernel.contains(op))
      op->moveBefore(first);
  runOnOneThread(rewriter, first);
  Operation *body = first;
  for (Operation *op : run)
    if (op != first && inKernel.contains(op)) {
      op->moveAfter(body);
      body = op;
    }
}

} // namespace

gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *ctx, gpu::Processor p) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
  return gpu::ParallelLoopDimMappingAttr::get(ctx, p, identity, identity);
}

void runOnOneThread(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto wrapper = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                         ValueRange{one}, ValueRange{one});
  op->moveBefore(wrapper.getBody()->getTerminator());
  (void)gpu::setMappingAttr(wrapper,
                            {mapTo(op->getContext(), gpu::Processor::BlockX)});
}

void scalarMovesToKernels(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<SmallVector<Operation *>> runs(1);
  for (Operation &op : func.getOps()) {
    bool access = isa<memref::LoadOp, memref::StoreOp>(op);
    bool between = isa<memref::AllocOp>(op) ||
                   (op.getNumRegions() == 0 && isMemoryEffectFree(&op));
    if (access || (between && !runs.back().empty()))
      runs.back().push_back(&op);
    else if (!runs.back().empty())
      runs.emplace_back();
  }
  for (SmallVector<Operation *> &run : runs) {
    while (!run.empty() && !isa<memref::LoadOp, memref::StoreOp>(run.back()))
      run.pop_back();
    if (!run.empty())
      moveScalarRunToKernel(rewriter, run);
  }
}

void mergeOneThreadKernels(RewriterBase &rewriter, func::FuncOp func) {
  scf::ParallelOp current;
  Operation *behind = nullptr; // where the next deallocation goes
  for (Operation &op : llvm::make_early_inc_range(func.getOps())) {
    if (isOneThreadKernel(&op)) {
      auto next = cast<scf::ParallelOp>(op);
      if (!current) {
        current = next;
        behind = next;
        continue;
      }
      rewriter.replaceAllUsesWith(next.getInductionVars()[0],
                                  current.getInductionVars()[0]);
      Operation *end = current.getBody()->getTerminator();
      for (Operation &inner :
           llvm::make_early_inc_range(next.getBody()->without_terminator()))
        inner.moveBefore(end);
      rewriter.eraseOp(next);
    } else if (current && isa<memref::DeallocOp>(op)) {
      op.moveAfter(behind);
      behind = &op;
    } else if (current &&
               (isa<arith::ConstantOp>(op) ||
                (isa<memref::AllocOp>(op) && op.getNumOperands() == 0))) {
      op.moveBefore(current);
    } else {
      current = nullptr;
    }
  }
}

} // namespace lmc
