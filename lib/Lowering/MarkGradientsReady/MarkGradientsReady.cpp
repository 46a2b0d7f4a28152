//===- MarkGradientsReady.cpp - tell the runtime when a gradient is final -===//
//
// Data parallelism all-reduces the gradients a grad_step writes. Started
// after the step, the all-reduce waits for the whole backward pass; started
// bucket by bucket as their gradients become final, it overlaps the rest of
// it (PyTorch DDP's buckets). A gradient is final after the last op that
// reaches its buffer — through a view, a pointer handed to a runtime
// matmul, or anything computed from those — so the call goes there.
//
//===----------------------------------------------------------------------===//

#include "../Common/Reach.h"
#include "../Common/RuntimeCalls.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace lmc {
#define GEN_PASS_DEF_LMCMARKGRADIENTSREADY
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The runtime function the calls go to (lmc/runtime/kernels.h).
constexpr llvm::StringLiteral kGradientReady = "lmc_rt_gradient_ready";

struct MarkGradientsReadyPass
    : public impl::LmcMarkGradientsReadyBase<MarkGradientsReadyPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto gradStep = module.lookupSymbol<func::FuncOp>("grad_step");
    if (!gradStep || !gradStep.getBody().hasOneBlock())
      return;
    Block &body = gradStep.getBody().front();
    OpBuilder builder(module.getContext());
    func::FuncOp ready;
    int64_t ordinal = 0;
    for (BlockArgument arg : body.getArguments()) {
      if (attrs::roleIn(gradStep.getArgAttrDict(arg.getArgNumber())) !=
          attrs::Role::Grad)
        continue;
      if (!ready)
        ready = declareRuntimeFunction(
            module, builder, kGradientReady,
            builder.getFunctionType({builder.getI64Type()}, {}));
      if (Operation *last = lastReachingOp(body, arg))
        builder.setInsertionPointAfter(last);
      else
        builder.setInsertionPointToStart(&body);
      Location loc = gradStep.getLoc();
      Value index = arith::ConstantIntOp::create(builder, loc, ordinal++, 64);
      func::CallOp::create(builder, loc, ready, index);
    }
  }
};

} // namespace
} // namespace lmc
