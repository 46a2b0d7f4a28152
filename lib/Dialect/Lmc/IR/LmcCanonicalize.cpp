//===- LmcCanonicalize.cpp - lmc canonicalization patterns ----------------===//
//
// Patterns that spare a training step whole passes over memory:
// - Transposes around matrix products become BLAS transpose flags. ONNX
//   graphs spell `x @ W^T` as a Transpose node feeding MatMul, autodiff
//   transposes weight gradients back, and attention transposes keys; each
//   would otherwise be a strided copy per step (about 15 ms of a 330 ms
//   GPT step).
// - The gradient of a Split (the fused q/k/v projection) is a sum of
//   zero-padded pieces; adjacent pieces become one concat.
// - A layer norm's input gradient plus another cotangent of its input (a
//   residual stream's) is added by the layer norm's gradient kernel as it
//   writes the row, instead of by a pass of its own.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lmc;

namespace {

/// `perm` with its last two entries exchanged.
SmallVector<int64_t> swapLastTwo(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> swapped(perm);
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  return swapped;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, d] : llvm::enumerate(perm))
    if (static_cast<int64_t>(i) != d)
      return false;
  return true;
}

/// Flips the transpose flag of `operand`, an operand of a matmul.
void flipTransposeFlag(PatternRewriter &rewriter, OpOperand &operand,
                       Value replacement) {
  auto matmul = cast<MatmulOp>(operand.getOwner());
  rewriter.modifyOpInPlace(matmul, [&] {
    operand.set(replacement);
    if (operand.getOperandNumber() == 0)
      matmul.setTransposeLhs(!matmul.getTransposeLhs());
    else
      matmul.setTransposeRhs(!matmul.getTransposeRhs());
  });
}

/// `operand` transposed by `perm`.
Value buildTranspose(PatternRewriter &rewriter, Location loc, Value operand,
                     ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return TransposeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      operand, perm);
}

/// matmul(transpose(x) over the last two dimensions, y) → matmul(x, y) with
/// the operand's transpose flag flipped.
struct FoldTransposeIntoMatmul : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : op->getOpOperands()) {
      auto transpose = operand.get().getDefiningOp<TransposeOp>();
      if (transpose && isIdentity(swapLastTwo(transpose.getPerm()))) {
        flipTransposeFlag(rewriter, operand, transpose.getOperand());
        return success();
      }
    }
    return failure();
  }
};

/// A transpose read only by matmuls that moves the innermost dimension
/// (attention's keys, [b, t, h, d] → [b, h, d, t]) becomes one that keeps it
/// innermost ([b, h, t, d], a copy of contiguous rows instead of a strided
/// gather), with the matmuls' flags flipped.
struct KeepInnermostForMatmuls : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = op.getPerm();
    if (perm.size() < 2)
      return failure();
    int64_t innermost = static_cast<int64_t>(perm.size()) - 1;
    SmallVector<int64_t> swapped = swapLastTwo(perm);
    if (perm.back() == innermost || swapped.back() != innermost ||
        isIdentity(swapped) ||
        !llvm::all_of(op->getUsers(), llvm::IsaPred<MatmulOp>))
      return failure();
    Value kept =
        buildTranspose(rewriter, op.getLoc(), op.getOperand(), swapped);
    for (OpOperand &use : llvm::make_early_inc_range(op->getUses()))
      flipTransposeFlag(rewriter, use, kept);
    return success();
  }
};

/// transpose(matmul(a, b), p) where p puts the product's rows innermost →
/// transpose(matmul(b, a) with both flags flipped, p') with p' keeping the
/// innermost dimension ((op(A)·op(B))ᵀ = op(B)ᵀ·op(A)ᵀ): no transpose when
/// p only exchanges the last two dimensions, else a contiguous copy.
struct FoldMatmulIntoTranspose : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getOperand().getDefiningOp<MatmulOp>();
    ArrayRef<int64_t> perm = op.getPerm();
    int64_t rank = static_cast<int64_t>(perm.size());
    if (!matmul || !matmul->hasOneUse() || perm.back() != rank - 2)
      return failure();
    // The product's last two dimensions exchanged: p' = s∘p for the swap s.
    SmallVector<int64_t> rest;
    for (int64_t d : perm)
      rest.push_back(d >= rank - 2 ? 2 * rank - 3 - d : d);
    SmallVector<int64_t> shape(matmul.getType().getShape());
    std::swap(shape[rank - 1], shape[rank - 2]);
    Value product = MatmulOp::create(
        rewriter, matmul.getLoc(),
        RankedTensorType::get(shape, matmul.getType().getElementType()),
        matmul.getRhs(), matmul.getLhs(), !matmul.getTransposeRhs(),
        !matmul.getTransposeLhs());
    if (isIdentity(rest))
      rewriter.replaceOp(op, product);
    else
      rewriter.replaceOp(op,
                         buildTranspose(rewriter, op.getLoc(), product, rest));
    return success();
  }
};

bool hasUnitStrides(SliceGradOp op) {
  return llvm::all_of(op.getStride(), [](int64_t s) { return s == 1; });
}

/// The window `slice_grad` writes: its start and the source's shape.
struct Window {
  ArrayRef<int64_t> start;
  ArrayRef<int64_t> size;
};

/// slice_grad(a) + slice_grad(b) with unit strides, windows that agree in
/// every dimension but one and touch along it → slice_grad(concat(a, b)):
/// one copy instead of two zero-padded tensors and an addition.
struct AdjacentSliceGradsToConcat : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<SliceGradOp>();
    auto rhs = op.getRhs().getDefiningOp<SliceGradOp>();
    if (!lhs || !rhs || !lhs->hasOneUse() || !rhs->hasOneUse() ||
        !hasUnitStrides(lhs) || !hasUnitStrides(rhs))
      return failure();
    Window a{lhs.getStart(), lhs.getSource().getType().getShape()};
    Window b{rhs.getStart(), rhs.getSource().getType().getShape()};
    std::optional<int64_t> axis;
    for (size_t d = 0; d < a.start.size(); ++d) {
      if (a.start[d] == b.start[d] && a.size[d] == b.size[d])
        continue;
      if (axis)
        return failure();
      axis = d;
    }
    if (!axis)
      return failure();
    int64_t d = *axis;
    SliceGradOp first = lhs, second = rhs;
    if (b.start[d] + b.size[d] == a.start[d])
      std::swap(first, second);
    else if (a.start[d] + a.size[d] != b.start[d])
      return failure();
    RankedTensorType firstType = first.getSource().getType();
    SmallVector<int64_t> shape(firstType.getShape());
    shape[d] += second.getSource().getType().getDimSize(d);
    Value joined = ConcatOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(shape, firstType.getElementType()),
        rewriter.getI64IntegerAttr(d),
        ValueRange{first.getSource(), second.getSource()});
    rewriter.replaceOpWithNewOp<SliceGradOp>(
        op, op.getType(), joined, first.getStart(), first.getStride());
    return success();
  }
};

/// concat(a, concat(b, c)) along one axis → concat(a, b, c).
struct FlattenNestedConcat : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> inputs;
    bool nested = false;
    for (Value input : op.getInputs()) {
      auto inner = input.getDefiningOp<ConcatOp>();
      if (inner && inner.getAxis() == op.getAxis() && inner->hasOneUse()) {
        llvm::append_range(inputs, inner.getInputs());
        nested = true;
      } else {
        inputs.push_back(input);
      }
    }
    if (!nested)
      return failure();
    rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), op.getAxisAttr(),
                                          inputs);
    return success();
  }
};

/// add(layer_norm_grad(..).dx, r), dx read only here, → layer_norm_grad(..
/// accumulate r).dx.
struct AddIntoLayerNormGrad : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [mine, other] : {std::pair{op.getLhs(), op.getRhs()},
                               std::pair{op.getRhs(), op.getLhs()}}) {
      auto grad = mine.getDefiningOp<LayerNormGradOp>();
      if (!grad || grad.getAccumulate() || mine != grad.getDx() ||
          !mine.hasOneUse() || other.getType() != mine.getType())
        continue;
      // The folded op takes the add's place: the scale's and bias's
      // gradients must not be read before it.
      auto readAfterAdd = [&](Value v) {
        return llvm::all_of(v.getUsers(), [&](Operation *user) {
          return user->getBlock() == op->getBlock() &&
                 op->isBeforeInBlock(user);
        });
      };
      if (!readAfterAdd(grad.getDscale()) || !readAfterAdd(grad.getDbias()))
        continue;
      rewriter.setInsertionPoint(op);
      auto folded = LayerNormGradOp::create(
          rewriter, grad.getLoc(), grad->getResultTypes(), grad.getX(),
          grad.getScale(), grad.getStats(), grad.getDy(), other);
      rewriter.replaceOp(op, folded.getDx());
      rewriter.replaceAllUsesWith(grad.getDscale(), folded.getDscale());
      rewriter.replaceAllUsesWith(grad.getDbias(), folded.getDbias());
      rewriter.eraseOp(grad);
      return success();
    }
    return failure();
  }
};

} // namespace

OpFoldResult SliceGradOp::fold(FoldAdaptor) {
  // A window covering the whole result: the source itself.
  bool fromZero = llvm::all_of(getStart(), [](int64_t s) { return s == 0; });
  if (hasUnitStrides(*this) && fromZero && getSource().getType() == getType())
    return getSource();
  return {};
}

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<AdjacentSliceGradsToConcat, AddIntoLayerNormGrad>(context);
}

void ConcatOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<FlattenNestedConcat>(context);
}

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<FoldTransposeIntoMatmul>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<FoldMatmulIntoTranspose, KeepInnermostForMatmuls>(context);
}
