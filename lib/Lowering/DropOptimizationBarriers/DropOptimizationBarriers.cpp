//===- DropOptimizationBarriers.cpp - barriers replaced by their operand -===//
//
// lmc.optimization_barrier keeps recomputed values (lmc-rematerialize) from
// being merged back into the values they replace. After the last CSE it has
// done its work, and bufferization does not know it.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Lowering/Passes.h"

namespace lmc {
#define GEN_PASS_DEF_LMCDROPOPTIMIZATIONBARRIERS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

struct DropOptimizationBarriersPass
    : public impl::LmcDropOptimizationBarriersBase<
          DropOptimizationBarriersPass> {
  void runOnOperation() override {
    getOperation()->walk([](OptimizationBarrierOp barrier) {
      barrier.getResult().replaceAllUsesWith(barrier.getOperand());
      barrier.erase();
    });
  }
};

} // namespace
} // namespace lmc
