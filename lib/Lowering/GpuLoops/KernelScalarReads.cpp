//===- KernelScalarReads.cpp - Scalars that only kernels use, read there --===//

#include "KernelScalarReads.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace lmc {
namespace {

/// The load and the function-level ops computed from it that have no
/// effect and no region, in block order; the kernels that use any of their
/// values inside. Fails when anything else (the host, a kernel's bounds)
/// uses one.
LogicalResult collectChain(memref::LoadOp load,
                           llvm::SetVector<Operation *> &chain,
                           llvm::SetVector<scf::ParallelOp> &kernels) {
  Block *body = load->getBlock();
  chain.insert(load);
  for (Operation &op :
       llvm::make_range(std::next(load->getIterator()), body->end())) {
    bool derived = llvm::any_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && chain.contains(def);
    });
    if (derived && op.getNumRegions() == 0 && isMemoryEffectFree(&op))
      chain.insert(&op);
  }
  for (Operation *op : chain)
    for (OpOperand &use : op->getUses()) {
      Operation *top = body->findAncestorOpInBlock(*use.getOwner());
      if (chain.contains(top))
        continue;
      auto kernel = dyn_cast_or_null<scf::ParallelOp>(top);
      if (!kernel || kernel == use.getOwner())
        return failure(); // the host, or a kernel's launch bounds
      kernels.insert(kernel);
    }
  return success(!kernels.empty());
}

} // namespace

void readScalarsInKernels(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<memref::LoadOp> loads(
      func.getBody().front().getOps<memref::LoadOp>());
  for (memref::LoadOp load : loads) {
    llvm::SetVector<Operation *> chain;
    llvm::SetVector<scf::ParallelOp> kernels;
    if (failed(collectChain(load, chain, kernels)))
      continue;
    for (scf::ParallelOp kernel : kernels) {
      rewriter.setInsertionPointToStart(kernel.getBody());
      IRMapping copies;
      for (Operation *op : chain)
        rewriter.clone(*op, copies);
      for (Operation *op : chain)
        for (Value result : op->getResults())
          rewriter.replaceUsesWithIf(
              result, copies.lookup(result), [&](OpOperand &use) {
                return kernel->isProperAncestor(use.getOwner());
              });
    }
    for (Operation *op : llvm::reverse(chain))
      rewriter.eraseOp(op);
  }
}

} // namespace lmc
