//===- ScatterAddsToLoops.cpp - O(updates) scatter-adds after sharding ----===//
//
// Sharding needs a scatter-add (an embedding's gradient) as one
// linalg.generic: every table row compares itself with every index,
// O(rows x updates). It reads its iteration index, so lmc-shard-complete
// keeps it whole on every process; after partitioning it becomes the loop
// nest over the updates that unsharded lowering builds (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace lmc {
#define GEN_PASS_DEF_LMCSCATTERADDSTOLOOPS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

struct ScatterAddsToLoopsPass
    : public impl::LmcScatterAddsToLoopsBase<ScatterAddsToLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> scatters;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op->hasAttr(lowering::kScatterAddAxisAttr))
        scatters.push_back(op);
    });
    for (linalg::GenericOp op : scatters) {
      auto axis = op->getAttrOfType<IntegerAttr>(lowering::kScatterAddAxisAttr);
      if (!axis || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1) {
        op.emitOpError("is not a scatter-add lmc lowered");
        return signalPassFailure();
      }
      OpBuilder b(op);
      Value loops = lowering::buildScatterLoops(
          b, op.getLoc(), axis.getInt(), op.getDpsInputs()[0],
          op.getDpsInputs()[1], op.getDpsInits()[0]);
      op->getResult(0).replaceAllUsesWith(loops);
      op.erase();
    }
  }
};

} // namespace
} // namespace lmc
