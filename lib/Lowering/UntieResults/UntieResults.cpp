//===- UntieResults.cpp - one tensor per function result ------------------===//
//
// CSE merges equal values, and two results of a step can be equal: two
// BatchNorms of one input with equal weights have equal weight gradients
// (`a(x) + b(x)`, every ResNet block with a downsampling shortcut at
// initialization). A function that returns one tensor twice is bufferized
// into one buffer returned twice, which buffer-results-to-out-params frees
// twice (a crash). Each repeated result gets a copy of its own, so every
// out-param has its own buffer.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace lmc {
#define GEN_PASS_DEF_LMCUNTIERESULTS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

struct UntieResultsPass : public impl::LmcUntieResultsBase<UntieResultsPass> {
  void runOnOperation() override {
    getOperation()->walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 16> returned;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || returned.insert(operand.get()).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(
            builder, ret.getLoc(), type, ValueRange(), operand.get()));
      }
    });
  }
};

} // namespace
} // namespace lmc
