//===- MatmulToRuntime.cpp - buffer-level matmuls to the runtime's BLAS ---===//
//
// Runs after bufferization: a linalg.matmul / linalg.batch_matmul on dense
// memrefs becomes one call to lmc_rt_matmul_{f32,f64,bf16,f16}
// (runtime/kernels; bf16/f16 operands accumulate into f32),
// which accumulates into the output exactly like the linalg op. A product
// into a buffer zero-filled just before it (most are: the lowering's
// products start from zero) takes the fill's place: the call overwrites C
// (BLAS beta = 0), and the step makes one pass over C instead of two.
// Transposed operands (from the indexing maps) become BLAS transpose flags;
// strided operands (views of slices) are copied into dense buffers first.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/RuntimeCalls.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lmc {
#define GEN_PASS_DEF_LMCMATMULTORUNTIME
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;
using namespace lmc;

namespace {

bool isDenseStatic(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

bool isStatic(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape();
}

/// `operand` itself when dense, else a dense copy of it (a strided view,
/// such as a slice of a fused projection): BLAS takes dense matrices, and
/// a copy costs far less than the product as scalar loops. Copies to free
/// after the call go to `temporaries`.
Value denseOperand(PatternRewriter &rewriter, Location loc, Value operand,
                   SmallVectorImpl<Value> &temporaries) {
  if (isDenseStatic(operand))
    return operand;
  auto type = cast<MemRefType>(operand.getType());
  Value dense = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
  memref::CopyOp::create(rewriter, loc, operand, dense);
  temporaries.push_back(dense);
  return dense;
}

/// Which operands the indexing maps transpose, or failure for anything but
/// the four (batched) matmul forms.
FailureOr<std::pair<bool, bool>> transposeFlags(linalg::LinalgOp op,
                                                bool batched) {
  MLIRContext *ctx = op.getContext();
  unsigned numDims = batched ? 4 : 3;
  unsigned m = numDims - 3, n = numDims - 2, k = numDims - 1;
  auto map = [&](unsigned r, unsigned c) {
    SmallVector<AffineExpr> exprs;
    if (batched)
      exprs.push_back(getAffineDimExpr(0, ctx));
    exprs.push_back(getAffineDimExpr(r, ctx));
    exprs.push_back(getAffineDimExpr(c, ctx));
    return AffineMap::get(numDims, 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map(m, n))
    return failure();
  bool transA = maps[0] == map(k, m), transB = maps[1] == map(n, k);
  if ((!transA && maps[0] != map(m, k)) || (!transB && maps[1] != map(k, n)))
    return failure();
  return std::make_pair(transA, transB);
}

/// The linalg.fill of +0.0 into `c` right before `op`, if any: nothing
/// between them reads or writes C, so the call may overwrite C instead.
linalg::FillOp zeroFillJustBefore(Operation *op, Value c) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() || fill.getDpsInits()[0] != c)
    return nullptr;
  return matchPattern(fill.getDpsInputs()[0], m_PosZeroFloat()) ? fill
                                                                : nullptr;
}

func::FuncOp getOrDeclareKernel(ModuleOp module, OpBuilder &b, StringRef name) {
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  Type i64 = b.getI64Type();
  return declareRuntimeFunction(
      module, b, name,
      b.getFunctionType({ptr, ptr, ptr, i64, i64, i64, i64, i64, i64, i64},
                        {}));
}

template <typename MatmulLikeOp>
struct MatmulToCall : public OpRewritePattern<MatmulLikeOp> {
  MatmulToCall(MLIRContext *ctx, StringRef prefix)
      : OpRewritePattern<MatmulLikeOp>(ctx), prefix(prefix.str()) {}
  std::string prefix;

  LogicalResult matchAndRewrite(MatmulLikeOp op,
                                PatternRewriter &rewriter) const override {
    constexpr bool batched =
        std::is_same_v<MatmulLikeOp, linalg::BatchMatmulOp>;
    if (!op.hasPureBufferSemantics())
      return failure();
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
    Value c = op.getDpsInits()[0];
    if (!isStatic(a) || !isStatic(b) || !isDenseStatic(c))
      return failure();
    Type accType = cast<MemRefType>(c.getType()).getElementType();
    Type inType = cast<MemRefType>(a.getType()).getElementType();
    if (cast<MemRefType>(b.getType()).getElementType() != inType)
      return failure();
    StringRef suffix;
    if (inType == accType && accType.isF32())
      suffix = "f32";
    else if (inType == accType && accType.isF64())
      suffix = "f64";
    else if (inType.isBF16() && accType.isF32())
      suffix = "bf16";
    else if (inType.isF16() && accType.isF32())
      suffix = "f16";
    else
      return failure();
    std::string kernel = prefix + suffix.str();
    FailureOr<std::pair<bool, bool>> flags =
        transposeFlags(cast<linalg::LinalgOp>(op.getOperation()), batched);
    if (failed(flags))
      return failure();

    ArrayRef<int64_t> cShape = cast<MemRefType>(c.getType()).getShape();
    ArrayRef<int64_t> aShape = cast<MemRefType>(a.getType()).getShape();
    int64_t batch = batched ? cShape[0] : 1;
    int64_t m = cShape[cShape.size() - 2], n = cShape.back();
    int64_t k = flags->first ? aShape[aShape.size() - 2] : aShape.back();

    Location loc = op.getLoc();
    linalg::FillOp zeroFill = zeroFillJustBefore(op, c);
    bool accumulate = !zeroFill;
    if (zeroFill)
      rewriter.eraseOp(zeroFill);
    auto module = op->template getParentOfType<ModuleOp>();
    func::FuncOp callee = getOrDeclareKernel(module, rewriter, kernel);
    SmallVector<Value> temporaries;
    a = denseOperand(rewriter, loc, a, temporaries);
    b = denseOperand(rewriter, loc, b, temporaries);
    SmallVector<Value> args;
    for (Value buffer : {a, b, c})
      args.push_back(bufferPointer(rewriter, loc, buffer));
    for (int64_t v : {batch, m, n, k, int64_t(flags->first),
                      int64_t(flags->second), int64_t(accumulate)})
      args.push_back(arith::ConstantIntOp::create(rewriter, loc, v, 64));
    func::CallOp::create(rewriter, loc, callee, args);
    for (Value temporary : temporaries)
      memref::DeallocOp::create(rewriter, loc, temporary);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MatmulToRuntimePass
    : public lmc::impl::LmcMatmulToRuntimeBase<MatmulToRuntimePass> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registry.insert<LLVM::LLVMDialect>();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MatmulToCall<linalg::MatmulOp>,
                 MatmulToCall<linalg::BatchMatmulOp>>(&getContext(),
                                                      kernelPrefix);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
