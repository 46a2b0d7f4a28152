//===- UntieFills.cpp - One tensor fill per destination -------------------===//
//
// CSE merges identical `linalg.fill`s, so one zero tensor ends up as the
// destination of many ops (every matmul and reduction that accumulates from
// zero). Each of those writes its destination in place, so bufferization
// fills one buffer and copies it for all but the last: on a GPT step,
// about 100 MB of memcpy. Filling each destination itself is half the
// memory traffic and frees the shared buffer early.
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace lmc {
#define GEN_PASS_DEF_LMCUNTIEFILLS
#include "lmc/Conversion/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

bool isDestination(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return dps && dps.isDpsInit(&use);
}

struct UntieFillsPass : public impl::LmcUntieFillsBase<UntieFillsPass> {
  void runOnOperation() override {
    SmallVector<DestinationStyleOpInterface> writers;
    getOperation()->walk(
        [&](DestinationStyleOpInterface op) { writers.push_back(op); });
    // In program order, the first destination of a fill nothing else reads
    // keeps it; every other destination gets a clone placed in front of it.
    DenseSet<Operation *> kept;
    OpBuilder builder(&getContext());
    for (DestinationStyleOpInterface writer : writers)
      for (OpOperand &init : writer.getDpsInitsMutable()) {
        auto fill = init.get().getDefiningOp<linalg::FillOp>();
        if (!fill || !fill.hasPureTensorSemantics() || fill->hasOneUse())
          continue;
        bool onlyDestinations = llvm::all_of(fill->getUses(), isDestination);
        if (onlyDestinations && kept.insert(fill).second)
          continue;
        builder.setInsertionPoint(writer);
        init.set(builder.clone(*fill)->getResult(0));
      }
  }
};

} // namespace
} // namespace lmc
