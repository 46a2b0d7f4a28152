//===- IndependentLoops.cpp - loops of a nest that write apart
//-------------===//
//
// A loop nest built before bufferization (a scatter-add over its updates)
// would run on one GPU thread; the loops whose iterations write different
// elements run on threads of their own instead (IndependentLoops.h).
//
//===----------------------------------------------------------------------===//

#include "IndependentLoops.h"

#include "../Common/Views.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace lmc {
namespace {

/// The loops of the perfect nest under `outer`, outermost first, or none
/// when a loop has results, holds more than the next loop, or has bounds
/// defined inside the nest.
SmallVector<scf::ForOp> perfectNest(scf::ForOp outer) {
  SmallVector<scf::ForOp> nest = {outer};
  while (true) {
    Block *body = nest.back().getBody();
    auto inner = dyn_cast<scf::ForOp>(body->front());
    if (!inner || &body->front() != body->getTerminator()->getPrevNode())
      break;
    nest.push_back(inner);
  }
  for (scf::ForOp loop : nest) {
    if (loop->getNumResults() != 0)
      return {};
    for (Value bound :
         {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
      if (outer->isAncestor(bound.getParentBlock()->getParentOp()))
        return {};
  }
  return nest;
}

/// The innermost body's only store, when the body writes one fresh buffer
/// at one place and reads it nowhere else, and nothing else in it has side
/// effects.
memref::StoreOp onlyStore(Block *body) {
  memref::StoreOp store;
  for (Operation &op : body->without_terminator()) {
    if (auto write = dyn_cast<memref::StoreOp>(op)) {
      if (store)
        return {};
      store = write;
    } else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op)) {
      return {};
    }
  }
  if (!store || !store.getMemRef().getDefiningOp<memref::AllocOp>())
    return {};
  Value target = store.getMemRef();
  for (auto load : body->getOps<memref::LoadOp>()) {
    if (load.getMemRef() == target) {
      if (load.getIndices() != store.getIndices())
        return {};
    } else if (rootBuffer(load.getMemRef()) == target) {
      return {};
    }
  }
  return store;
}

} // namespace

FailureOr<scf::ParallelOp> parallelizeIndependentLoops(RewriterBase &rewriter,
                                                       scf::ForOp outer) {
  SmallVector<scf::ForOp> nest = perfectNest(outer);
  if (nest.empty())
    return failure();
  Block *body = nest.back().getBody();
  memref::StoreOp store = onlyStore(body);
  if (!store)
    return failure();
  SmallVector<scf::ForOp> independent, sequential;
  for (scf::ForOp loop : nest)
    (llvm::is_contained(store.getIndices(), loop.getInductionVar())
         ? independent
         : sequential)
        .push_back(loop);
  if (independent.empty())
    return failure();

  Location loc = outer.getLoc();
  rewriter.setInsertionPoint(outer);
  auto bounds = [&](auto get) {
    return llvm::map_to_vector(independent,
                               [&](scf::ForOp loop) { return get(loop); });
  };
  auto parallel = scf::ParallelOp::create(
      rewriter, loc,
      bounds([](scf::ForOp loop) { return loop.getLowerBound(); }),
      bounds([](scf::ForOp loop) { return loop.getUpperBound(); }),
      bounds([](scf::ForOp loop) { return loop.getStep(); }));
  IRMapping mapping;
  for (auto [loop, iv] : llvm::zip(independent, parallel.getInductionVars()))
    mapping.map(loop.getInductionVar(), iv);
  rewriter.setInsertionPoint(parallel.getBody()->getTerminator());
  for (scf::ForOp loop : sequential) {
    auto copy = scf::ForOp::create(rewriter, loc, loop.getLowerBound(),
                                   loop.getUpperBound(), loop.getStep());
    mapping.map(loop.getInductionVar(), copy.getInductionVar());
    rewriter.setInsertionPoint(copy.getBody()->getTerminator());
  }
  for (Operation &op : body->without_terminator())
    rewriter.clone(op, mapping);
  rewriter.eraseOp(outer);
  return parallel;
}

} // namespace lmc
