//===- ApproximateMath.cpp - vectorizable f32 exp, erf and tanh -----------===//
//
// math.exp, math.erf and math.tanh on f32 become upstream's polynomial
// approximations (plain arithmetic), so the loops of softmax, GELU (erf, and
// GPT-2's tanh form) and their gradients vectorize instead of calling libm's
// scalar expf/erff/tanhf per element. f64 (the gradient checker) keeps libm.
//
// Measured against libm in f64 over [-10, 10] (step 5e-5): tanh's
// approximation is within 2.6e-7 absolute and relative (libm's tanhf:
// 9.9e-8 / 1.6e-7). GPT-2 124M's step spent 12 % of its time in scalar
// tanhf calls before.
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
        patterns, [](StringRef name) {
          return name == "math.exp" || name == "math.erf" ||
                 name == "math.tanh";
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
