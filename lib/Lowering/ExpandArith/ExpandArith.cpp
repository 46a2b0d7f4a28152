//===- ExpandArith.cpp - arith-expand that keeps maximumf/minimumf --------===//
//
// The host code needs upstream's arith-expand for what LLVM lowering lacks
// (ceildivsi/floordivsi, bf16 conversions as integer arithmetic), but its
// maximumf/minimumf expansion into compares and selects hides the
// reduction from LLVM's loop vectorizer: a softmax's row maximum then runs
// one scalar element at a time with a store per element. Kept as
// arith.maximumf, it becomes llvm.maximum, which the vectorizer reduces.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lmc {
#define GEN_PASS_DEF_LMCEXPANDARITH
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace {

struct ExpandArithPass : public lmc::impl::LmcExpandArithBase<ExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
