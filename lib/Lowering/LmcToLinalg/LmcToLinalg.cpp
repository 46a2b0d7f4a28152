//===- LmcToLinalg.cpp - lower lmc ops to linalg on tensors ---------------===//
//
// Elementwise ops become linalg.generic (fused later by
// linalg-fuse-elementwise-ops); shape ops become tensor/linalg ops.
// Reductions, contractions and the softmax family are in Reductions.cpp.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace lmc {
#define GEN_PASS_DEF_CONVERTLMCTOLINALG
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;
using namespace lmc;
using namespace lmc::lowering;

namespace {

/// Lowers a float elementwise op through a scalar body.
template <typename SourceOp>
struct ElementwiseLowering : public OpConversionPattern<SourceOp> {
  using ScalarFn = Value (*)(OpBuilder &, Location, ValueRange);
  ElementwiseLowering(MLIRContext *ctx, ScalarFn fn)
      : OpConversionPattern<SourceOp>(ctx), fn(fn) {}

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Value result =
        buildElementwise(rewriter, op.getLoc(), type, adaptor.getOperands(),
                         [&](OpBuilder &b, Location loc, ValueRange args) {
                           return fn(b, loc, args.drop_back());
                         });
    rewriter.replaceOp(op, result);
    return success();
  }

  ScalarFn fn;
};

Value one(OpBuilder &b, Location loc, Value like) {
  return buildFloat(b, loc, like.getType(), 1.0);
}

/// Neg, Abs, Add, Sub, Mul, Max and Min also take signed integers.
bool isInteger(Value scalar) { return isa<IntegerType>(scalar.getType()); }

Value zeroLike(OpBuilder &b, Location loc, Value integer) {
  return arith::ConstantOp::create(b, loc,
                                   b.getIntegerAttr(integer.getType(), 0));
}

void populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseLowering<NegOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isInteger(a[0]))
          return arith::SubIOp::create(b, l, zeroLike(b, l, a[0]), a[0]);
        return arith::NegFOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<ReluOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value zero = buildFloat(b, l, a[0].getType(), 0.0);
        return arith::MaximumFOp::create(b, l, a[0], zero);
      });
  patterns.add<ElementwiseLowering<SigmoidOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, a[0]));
        Value denom = arith::AddFOp::create(b, l, one(b, l, a[0]), e);
        return arith::DivFOp::create(b, l, one(b, l, a[0]), denom);
      });
  patterns.add<ElementwiseLowering<TanhOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::TanhOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<ExpOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::ExpOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<LogOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::LogOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<SqrtOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::SqrtOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<AddOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isInteger(a[0]))
          return arith::AddIOp::create(b, l, a[0], a[1]);
        return arith::AddFOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<SubOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isInteger(a[0]))
          return arith::SubIOp::create(b, l, a[0], a[1]);
        return arith::SubFOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<MulOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isInteger(a[0]))
          return arith::MulIOp::create(b, l, a[0], a[1]);
        return arith::MulFOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<DivOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::DivFOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<PowOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::PowFOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<AbsOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isInteger(a[0]))
          return math::AbsIOp::create(b, l, a[0]);
        return math::AbsFOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<ErfOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::ErfOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<SinOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::SinOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<CosOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::CosOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<AtanOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::AtanOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<FloorOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::FloorOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<CeilOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::CeilOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<RoundOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::RoundEvenOp::create(b, l, a[0]);
      });
  patterns.add<ElementwiseLowering<MaxOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isInteger(a[0]))
          return arith::MaxSIOp::create(b, l, a[0], a[1]);
        return arith::MaximumFOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<MinOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isInteger(a[0]))
          return arith::MinSIOp::create(b, l, a[0], a[1]);
        return arith::MinimumFOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<NotOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value one = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
        return arith::XOrIOp::create(b, l, a[0], one);
      });
  patterns.add<ElementwiseLowering<AndOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::AndIOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<OrOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::OrIOp::create(b, l, a[0], a[1]);
      });
  patterns.add<ElementwiseLowering<SelectOp>>(
      ctx, [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
      });
}

/// lmc.cmp's predicate for floats (ordered, `ne` unordered) and integers
/// (signed).
static std::pair<arith::CmpFPredicate, arith::CmpIPredicate>
arithPredicates(CmpPredicate predicate) {
  switch (predicate) {
  case CmpPredicate::eq:
    return {arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq};
  case CmpPredicate::ne:
    return {arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne};
  case CmpPredicate::lt:
    return {arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt};
  case CmpPredicate::le:
    return {arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle};
  case CmpPredicate::gt:
    return {arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt};
  case CmpPredicate::ge:
    return {arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge};
  }
  llvm_unreachable("unknown lmc.cmp predicate");
}

struct CmpLowering : public OpConversionPattern<CmpOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CmpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [predicate, intPredicate] = arithPredicates(op.getPredicate());
    bool isFloat = isa<FloatType>(op.getLhs().getType().getElementType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          if (!isFloat)
            return arith::CmpIOp::create(b, loc, intPredicate, args[0],
                                         args[1]);
          return arith::CmpFOp::create(b, loc, predicate, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct BroadcastInDimLowering : public OpConversionPattern<BroadcastInDimOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BroadcastInDimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = op.getType();
    RankedTensorType operandType = op.getOperand().getType();
    unsigned rank = resultType.getRank();
    SmallVector<AffineExpr> exprs;
    for (auto [i, dim] : llvm::enumerate(op.getDims())) {
      bool expanded =
          operandType.getDimSize(i) == 1 && resultType.getDimSize(dim) != 1;
      exprs.push_back(expanded ? rewriter.getAffineConstantExpr(0)
                               : rewriter.getAffineDimExpr(dim));
    }
    AffineMap inputMap = AffineMap::get(rank, 0, exprs, op.getContext());
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value result = buildGeneric(
        rewriter, op.getLoc(), resultType,
        buildEmpty(rewriter, op.getLoc(), resultType), adaptor.getOperand(),
        inputMap, rewriter.getMultiDimIdentityMap(rank), iterators,
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ReshapeLowering : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       buildStaticReshape(rewriter, op.getLoc(),
                                          adaptor.getOperand(), op.getType()));
    return success();
  }
};

struct TransposeLowering : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value init = buildEmpty(rewriter, op.getLoc(), op.getType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), adaptor.getOperand(), init, op.getPerm());
    rewriter.replaceOp(op, transpose->getResults());
    return success();
  }
};

struct ConvertLmcToLinalgPass
    : public lmc::impl::ConvertLmcToLinalgBase<ConvertLmcToLinalgPass> {
  using ConvertLmcToLinalgBase::ConvertLmcToLinalgBase;
  void runOnOperation() override {
    ConversionTarget target(getContext());
    target.addIllegalDialect<LmcDialect>();
    // Kept through fusion and CSE (lmc-drop-optimization-barriers).
    target.addLegalOp<OptimizationBarrierOp>();
    // Calls into the runtime, made right before bufferization
    // (lmc-attention-to-runtime, lmc-layer-norm-to-runtime).
    target.addLegalOp<AttentionOp, AttentionGradOp, LayerNormOp,
                      LayerNormGradOp>();
    // And, on the CPU, f32 convolutions (lmc-convolution-to-runtime).
    if (convolutionsToRuntime)
      target.addDynamicallyLegalOp<ConvOp, ConvInputGradOp, ConvWeightGradOp>(
          isRuntimeConvolution);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           scf::SCFDialect, func::FuncDialect,
                           LLVM::LLVMDialect>();
    RewritePatternSet patterns(&getContext());
    populateLmcToLinalgPatterns(patterns, shardable, checkIndices);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void lmc::populateLmcToLinalgPatterns(RewritePatternSet &patterns,
                                      bool shardable, bool checkIndices) {
  populateElementwisePatterns(patterns);
  patterns.add<CmpLowering, BroadcastInDimLowering, ReshapeLowering,
               TransposeLowering>(patterns.getContext());
  populateReductionLoweringPatterns(patterns, shardable);
  populateDataMovementLoweringPatterns(patterns, shardable, checkIndices);
  populateIntegerDivisionPatterns(patterns, checkIndices);
  populateConvolutionLoweringPatterns(patterns);
}
