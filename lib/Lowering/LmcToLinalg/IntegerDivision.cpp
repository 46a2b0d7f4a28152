//===- IntegerDivision.cpp - lmc.div on signed integers -----------------===//
//
// Index arithmetic an export computes at run time divides integers (ONNX
// Div and Mod on int64: window positions, relative-position buckets).
// arith.divsi traps or is undefined for a zero divisor and for min / -1,
// so both are decided before it divides: min / -1 wraps to min (numpy's and
// PyTorch's result), and a zero divisor ends a CPU run through
// lmc_rt_integer_division_by_zero with the op's ONNX node, as PyTorch
// raises ZeroDivisionError. A GPU kernel cannot call the host: there the
// quotient of a zero divisor is 0.
//
//===----------------------------------------------------------------------===//

#include "../Common/RuntimeCalls.h"
#include "LoweringUtils.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace lmc::lowering {
namespace {

struct IntegerDivLowering : public OpConversionPattern<DivOp> {
  IntegerDivLowering(MLIRContext *ctx, bool checkDivisors)
      // Before the float elementwise lowering of lmc.div.
      : OpConversionPattern<DivOp>(ctx, /*benefit=*/2),
        checkDivisors(checkDivisors) {}

  LogicalResult
  matchAndRewrite(DivOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto element = dyn_cast<IntegerType>(type.getElementType());
    if (!element)
      return failure();
    Location loc = op.getLoc();
    std::string symbol;
    func::FuncOp callee;
    if (checkDivisors) {
      auto module = op->getParentOfType<ModuleOp>();
      auto ptr = LLVM::LLVMPointerType::get(getContext());
      callee = declareRuntimeFunction(
          module, rewriter, "lmc_rt_integer_division_by_zero",
          FunctionType::get(getContext(), {ptr}, {}));
      symbol = declareSiteText(rewriter, module, loc, siteOf(loc, "node"),
                               "lmc_division_site");
    }
    Value result = buildElementwise(
        rewriter, loc, type, adaptor.getOperands(),
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value lhs = args[0], rhs = args[1];
          auto constant = [&](int64_t v) -> Value {
            return arith::ConstantOp::create(b, l,
                                             b.getIntegerAttr(element, v));
          };
          Value zero = constant(0), one = constant(1), minusOne = constant(-1);
          Value isZero =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, rhs, zero);
          if (checkDivisors) {
            auto ptr = LLVM::LLVMPointerType::get(b.getContext());
            scf::IfOp::create(b, l, isZero, [&](OpBuilder &tb, Location tl) {
              Value address = LLVM::AddressOfOp::create(tb, tl, ptr, symbol);
              func::CallOp::create(tb, tl, callee, ValueRange{address});
              scf::YieldOp::create(tb, tl);
            });
          }
          Value isMinusOne = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, rhs, minusOne);
          // Divide by 1 where the divisor is 0 or -1, then pick.
          Value safe = arith::SelectOp::create(
              b, l, arith::OrIOp::create(b, l, isZero, isMinusOne), one, rhs);
          Value quotient = arith::DivSIOp::create(b, l, lhs, safe);
          Value negated = arith::SubIOp::create(b, l, zero, lhs); // wraps
          Value picked =
              arith::SelectOp::create(b, l, isMinusOne, negated, quotient);
          return arith::SelectOp::create(b, l, isZero, zero, picked);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  bool checkDivisors;
};

} // namespace

void populateIntegerDivisionPatterns(RewritePatternSet &patterns,
                                     bool checkDivisors) {
  patterns.add<IntegerDivLowering>(patterns.getContext(), checkDivisors);
}

} // namespace lmc::lowering
