//===- ApproximateMath.cpp - vectorizable f32 exp and erf -----------------===//
//
// math.exp and math.erf on f32 become upstream's polynomial approximations
// (plain arithmetic), so the loops of softmax, GELU and their gradients
// vectorize instead of calling libm's scalar expf/erff per element. f64
// (the gradient checker) keeps libm.
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lmc {
#define GEN_PASS_DEF_LMCAPPROXIMATEMATH
#include "lmc/Conversion/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace {

struct ApproximateMathPass
    : public lmc::impl::LmcApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return name == "math.exp" || name == "math.erf"; });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
