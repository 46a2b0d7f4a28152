//===- Convolution.cpp - lower convolutions and pooling to linalg ---------===//
//
// Padding is a linalg.generic over the padded tensor that reads the source
// with tensor.extract at a clamped position and selects the pad value
// outside (no tensor.pad, so bufferization needs no strided copies). Then:
//
// - lmc.conv: one linalg.generic over (n, f, o..., c, k...) reading the
//   padded input at `o * stride + k * dilation` and channel
//   `(f floordiv F/groups) * C/groups + c`;
// - lmc.conv_weight_grad: the same access pattern with (f, c, k...) parallel
//   and (n, o...) reduced;
// - lmc.conv_input_grad: a generic over (n, c, i..., f, k...) that reads the
//   cotangent at `o = (i + pad_low - k * dilation) / stride` with
//   tensor.extract when that division is exact and in range (a gather, so
//   the result map stays a projected permutation);
// - bf16/f16 operands of the three convolutions (lmc-mixed-precision) are
//   extended to the f32 result type inside the loop body;
// - lmc.max_pool: a max-reduction generic over the -inf-padded input;
// - lmc.max_pool_grad: an argmax generic (value and first kernel offset,
//   ties to the smaller offset so the result does not depend on the loop
//   order), then a gather like conv_input_grad that adds the cotangent of
//   every window whose argmax is this position; when the windows tile the
//   input (kernel = stride: a 2 x 2 pool of stride 2), one elementwise
//   pass instead, each position reading its own window.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace lmc;

namespace lmc::lowering {
namespace {

using utils::IteratorType;

Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value andI1(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return lhs ? arith::AndIOp::create(b, loc, lhs, rhs).getResult() : rhs;
}

SmallVector<IteratorType> iterators(unsigned parallel, unsigned reduction) {
  SmallVector<IteratorType> result(parallel, IteratorType::parallel);
  result.append(reduction, IteratorType::reduction);
  return result;
}

/// The window geometry shared by the ops.
struct Window {
  ArrayRef<int64_t> strides, dilations, padLow, padHigh;
};

template <typename OpTy> Window windowOf(OpTy op) {
  return {op.getStrides(), op.getDilations(), op.getPadLow(), op.getPadHigh()};
}

/// `x` ([N, C, spatial...]) padded with `padValue` per the window.
Value buildPadded(OpBuilder &b, Location loc, Value x, const Window &w,
                  double padValue) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t spatial = type.getRank() - 2;
  if (llvm::all_of(w.padLow, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(w.padHigh, [](int64_t p) { return p == 0; }))
    return x;
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t i = 0; i < spatial; ++i)
    shape[2 + i] += w.padLow[i] + w.padHigh[i];
  auto paddedType = RankedTensorType::get(shape, type.getElementType());
  unsigned rank = paddedType.getRank();
  return buildGeneric(
      b, loc, paddedType, buildEmpty(b, loc, paddedType), ValueRange{}, {},
      b.getMultiDimIdentityMap(rank), iterators(rank, 0),
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at;
        Value inside;
        for (unsigned d = 0; d < rank; ++d) {
          Value idx = linalg::IndexOp::create(nb, nl, d);
          if (d < 2) {
            at.push_back(idx);
            continue;
          }
          int64_t size = type.getDimSize(d);
          Value src = arith::SubIOp::create(
              nb, nl, idx, indexConst(nb, nl, w.padLow[d - 2]));
          Value geZero = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::sge, src, indexConst(nb, nl, 0));
          Value ltSize = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::slt, src, indexConst(nb, nl, size));
          inside = andI1(nb, nl, inside, andI1(nb, nl, geZero, ltSize));
          Value clamped =
              arith::MaxSIOp::create(nb, nl, src, indexConst(nb, nl, 0));
          clamped = arith::MinSIOp::create(nb, nl, clamped,
                                           indexConst(nb, nl, size - 1));
          at.push_back(clamped);
        }
        Value value = tensor::ExtractOp::create(nb, nl, x, at);
        Value pad = buildFloat(nb, nl, type.getElementType(), padValue);
        return arith::SelectOp::create(nb, nl, inside, value, pad);
      });
}

/// For output index `o` of a window op seen from input position `i` through
/// kernel offset `k`: `o = (i + pad_low - k * dilation) / stride`. Appends
/// `o` clamped into [0, outSize) to `at` and returns whether the division
/// is exact and in range (combined with `valid`).
Value sourceWindow(OpBuilder &b, Location loc, Value i, Value k, int64_t padLow,
                   int64_t dilation, int64_t stride, int64_t outSize,
                   Value valid, SmallVectorImpl<Value> &at) {
  Value num = arith::AddIOp::create(b, loc, i, indexConst(b, loc, padLow));
  num = arith::SubIOp::create(
      b, loc, num,
      arith::MulIOp::create(b, loc, k, indexConst(b, loc, dilation)));
  Value zero = indexConst(b, loc, 0);
  Value nonNegative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, num, zero);
  Value clampedNum = arith::MaxSIOp::create(b, loc, num, zero);
  Value s = indexConst(b, loc, stride);
  Value q = arith::DivUIOp::create(b, loc, clampedNum, s);
  Value r = arith::RemUIOp::create(b, loc, clampedNum, s);
  Value exact =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, r, zero);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, q,
                                        indexConst(b, loc, outSize));
  at.push_back(
      arith::MinSIOp::create(b, loc, q, indexConst(b, loc, outSize - 1)));
  return andI1(b, loc, valid,
               andI1(b, loc, nonNegative, andI1(b, loc, exact, inRange)));
}

/// `value` extended to `type`: bf16/f16 operands of a mixed-precision
/// product are multiplied in f32, where their product is exact.
Value widen(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return arith::ExtFOp::create(b, loc, type, value);
}

/// `result[r] = sum lhs[l] * rhs[k]` over a loop nest of `numLoops` dims
/// (`parallel` of them first, then `reduction`), starting from zero: the
/// shared shape of the convolution and its weight gradient.
Value buildSumOfProducts(OpBuilder &b, Location loc, RankedTensorType type,
                         Value lhs, Value rhs, unsigned numLoops,
                         ArrayRef<AffineExpr> lhsExprs,
                         ArrayRef<AffineExpr> rhsExprs,
                         ArrayRef<AffineExpr> resultExprs, unsigned parallel,
                         unsigned reduction) {
  MLIRContext *ctx = b.getContext();
  return buildGeneric(
      b, loc, type,
      buildFilled(b, loc, type, b.getFloatAttr(type.getElementType(), 0.0)),
      {lhs, rhs},
      {AffineMap::get(numLoops, 0, lhsExprs, ctx),
       AffineMap::get(numLoops, 0, rhsExprs, ctx)},
      AffineMap::get(numLoops, 0, resultExprs, ctx),
      iterators(parallel, reduction),
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value product =
            arith::MulFOp::create(nb, l, widen(nb, l, a[0], a[2].getType()),
                                  widen(nb, l, a[1], a[2].getType()));
        return arith::AddFOp::create(nb, l, a[2], product);
      });
}

struct ConvLowering : public OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Window w = windowOf(op);
    unsigned s = type.getRank() - 2, numLoops = 3 + 2 * s;
    int64_t groups = op.getGroups();
    int64_t perGroupC = op.getWeight().getType().getDimSize(1);
    int64_t perGroupF = type.getDimSize(1) / groups;
    auto d = [&](unsigned i) { return rewriter.getAffineDimExpr(i); };
    // Loops: n, f, o..., c, k...
    AffineExpr channel = groups == 1
                             ? d(2 + s)
                             : d(1).floorDiv(perGroupF) * perGroupC + d(2 + s);
    SmallVector<AffineExpr> xExprs = {d(0), channel}, wExprs = {d(1), d(2 + s)},
                            yExprs = {d(0), d(1)};
    for (unsigned i = 0; i < s; ++i) {
      xExprs.push_back(d(2 + i) * w.strides[i] + d(3 + s + i) * w.dilations[i]);
      wExprs.push_back(d(3 + s + i));
      yExprs.push_back(d(2 + i));
    }
    Value padded = buildPadded(rewriter, loc, adaptor.getInput(), w, 0.0);
    Value result =
        buildSumOfProducts(rewriter, loc, type, padded, adaptor.getWeight(),
                           numLoops, xExprs, wExprs, yExprs, 2 + s, 1 + s);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvWeightGradLowering : public OpConversionPattern<ConvWeightGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvWeightGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Window w = windowOf(op);
    unsigned s = type.getRank() - 2, numLoops = 3 + 2 * s;
    int64_t groups = op.getGroups();
    int64_t perGroupC = type.getDimSize(1);
    int64_t perGroupF = type.getDimSize(0) / groups;
    auto d = [&](unsigned i) { return rewriter.getAffineDimExpr(i); };
    // Loops: f, c, k..., n, o...
    AffineExpr channel =
        groups == 1 ? d(1) : d(0).floorDiv(perGroupF) * perGroupC + d(1);
    SmallVector<AffineExpr> xExprs = {d(2 + s), channel},
                            gExprs = {d(2 + s), d(0)}, rExprs = {d(0), d(1)};
    for (unsigned i = 0; i < s; ++i) {
      xExprs.push_back(d(3 + s + i) * w.strides[i] + d(2 + i) * w.dilations[i]);
      gExprs.push_back(d(3 + s + i));
      rExprs.push_back(d(2 + i));
    }
    Value padded = buildPadded(rewriter, loc, adaptor.getInput(), w, 0.0);
    Value result =
        buildSumOfProducts(rewriter, loc, type, padded, adaptor.getGrad(),
                           numLoops, xExprs, gExprs, rExprs, 2 + s, 1 + s);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvInputGradLowering : public OpConversionPattern<ConvInputGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvInputGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType gradType = op.getGrad().getType();
    RankedTensorType weightType = op.getWeight().getType();
    Window w = windowOf(op);
    unsigned s = type.getRank() - 2, numLoops = 3 + 2 * s;
    int64_t groups = op.getGroups();
    int64_t perGroupC = weightType.getDimSize(1);
    int64_t perGroupF = weightType.getDimSize(0) / groups;
    auto d = [&](unsigned i) { return rewriter.getAffineDimExpr(i); };
    MLIRContext *ctx = op.getContext();
    // Loops: n, c, i..., f (within the group), k...
    Value weight = adaptor.getWeight();
    SmallVector<AffineExpr> wExprs;
    if (groups == 1) {
      wExprs = {d(2 + s), d(1)};
    } else {
      // [F, C/g, k...] -> [g, F/g, C/g, k...] so that f is a plain loop.
      SmallVector<int64_t> shape = {groups, perGroupF, perGroupC};
      llvm::append_range(shape, weightType.getShape().drop_front(2));
      SmallVector<ReassociationIndices> groupsOf = {{0, 1}, {2}};
      for (unsigned i = 0; i < s; ++i)
        groupsOf.push_back({static_cast<int64_t>(3 + i)});
      weight = tensor::ExpandShapeOp::create(
          rewriter, loc,
          RankedTensorType::get(shape, weightType.getElementType()), weight,
          groupsOf);
      wExprs = {d(1).floorDiv(perGroupC), d(2 + s), d(1) % perGroupC};
    }
    SmallVector<AffineExpr> rExprs = {d(0), d(1)};
    for (unsigned i = 0; i < s; ++i) {
      wExprs.push_back(d(3 + s + i));
      rExprs.push_back(d(2 + i));
    }
    Value grad = adaptor.getGrad();
    Value result = buildGeneric(
        rewriter, loc, type,
        buildFilled(rewriter, loc, type,
                    rewriter.getFloatAttr(type.getElementType(), 0.0)),
        {weight}, {AffineMap::get(numLoops, 0, wExprs, ctx)},
        AffineMap::get(numLoops, 0, rExprs, ctx), iterators(2 + s, 1 + s),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value n = linalg::IndexOp::create(b, l, 0);
          Value c = linalg::IndexOp::create(b, l, 1);
          Value f = linalg::IndexOp::create(b, l, 2 + s);
          if (groups > 1) {
            Value g =
                arith::DivUIOp::create(b, l, c, indexConst(b, l, perGroupC));
            f = arith::AddIOp::create(
                b, l,
                arith::MulIOp::create(b, l, g, indexConst(b, l, perGroupF)), f);
          }
          SmallVector<Value> at = {n, f};
          Value valid;
          for (unsigned i = 0; i < s; ++i)
            valid = sourceWindow(b, l, linalg::IndexOp::create(b, l, 2 + i),
                                 linalg::IndexOp::create(b, l, 3 + s + i),
                                 w.padLow[i], w.dilations[i], w.strides[i],
                                 gradType.getDimSize(2 + i), valid, at);
          Type element = type.getElementType();
          Value g =
              widen(b, l, tensor::ExtractOp::create(b, l, grad, at), element);
          Value term =
              arith::MulFOp::create(b, l, g, widen(b, l, a[0], element));
          Value zero = buildFloat(b, l, element, 0.0);
          term = arith::SelectOp::create(b, l, valid, term, zero);
          return arith::AddFOp::create(b, l, a[1], term);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MaxPoolLowering : public OpConversionPattern<MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Window w = windowOf(op);
    unsigned s = type.getRank() - 2, numLoops = 2 + 2 * s;
    auto d = [&](unsigned i) { return rewriter.getAffineDimExpr(i); };
    MLIRContext *ctx = op.getContext();
    // Loops: n, c, o..., k...
    SmallVector<AffineExpr> xExprs = {d(0), d(1)}, yExprs = {d(0), d(1)};
    for (unsigned i = 0; i < s; ++i) {
      xExprs.push_back(d(2 + i) * w.strides[i] + d(2 + s + i) * w.dilations[i]);
      yExprs.push_back(d(2 + i));
    }
    // The kernel extent only appears in the window, so a kernel-shaped
    // operand (unused in the body) gives the loop its range.
    double inf = std::numeric_limits<double>::infinity();
    Value padded = buildPadded(rewriter, loc, adaptor.getInput(), w, -inf);
    Value kernel = buildEmpty(
        rewriter, loc,
        RankedTensorType::get(op.getKernel(), type.getElementType()));
    SmallVector<AffineExpr> kExprs;
    for (unsigned i = 0; i < s; ++i)
      kExprs.push_back(d(2 + s + i));
    Value result = buildGeneric(
        rewriter, loc, type,
        buildFilled(rewriter, loc, type,
                    rewriter.getFloatAttr(type.getElementType(), -inf)),
        {padded, kernel},
        {AffineMap::get(numLoops, 0, xExprs, ctx),
         AffineMap::get(numLoops, 0, kExprs, ctx)},
        AffineMap::get(numLoops, 0, yExprs, ctx), iterators(2 + s, s),
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::MaximumFOp::create(b, l, a[2], a[0]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A constant of shape `kernel` holding the row-major offset of each entry.
Value buildKernelOffsets(OpBuilder &b, Location loc, ArrayRef<int64_t> kernel) {
  auto type = RankedTensorType::get(kernel, b.getI64Type());
  SmallVector<int64_t> offsets(type.getNumElements());
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    offsets[i] = i;
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<int64_t>(offsets)));
}

/// Whether the pooling windows of `op` tile its input: kernel = stride,
/// no dilation or padding, and the windows cover every position.
bool tilesInput(MaxPoolGradOp op, RankedTensorType input,
                RankedTensorType output) {
  for (size_t i = 0; i < op.getKernel().size(); ++i)
    if (op.getKernel()[i] != op.getStrides()[i] || op.getDilations()[i] != 1 ||
        op.getPadLow()[i] != 0 || op.getPadHigh()[i] != 0 ||
        input.getDimSize(2 + i) !=
            output.getDimSize(2 + i) * op.getStrides()[i])
      return false;
  return true;
}

struct MaxPoolGradLowering : public OpConversionPattern<MaxPoolGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MaxPoolGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType gradType = op.getGrad().getType();
    Type element = type.getElementType();
    Window w = windowOf(op);
    unsigned s = type.getRank() - 2, numLoops = 2 + 2 * s;
    auto d = [&](unsigned i) { return rewriter.getAffineDimExpr(i); };
    MLIRContext *ctx = op.getContext();
    double inf = std::numeric_limits<double>::infinity();
    Value offsets = buildKernelOffsets(rewriter, loc, op.getKernel());

    // 1. Per window: the maximum and the smallest kernel offset attaining it.
    SmallVector<AffineExpr> xExprs = {d(0), d(1)}, yExprs = {d(0), d(1)},
                            kExprs;
    for (unsigned i = 0; i < s; ++i) {
      xExprs.push_back(d(2 + i) * w.strides[i] + d(2 + s + i) * w.dilations[i]);
      yExprs.push_back(d(2 + i));
      kExprs.push_back(d(2 + s + i));
    }
    Value padded = buildPadded(rewriter, loc, adaptor.getInput(), w, -inf);
    auto argType =
        RankedTensorType::get(gradType.getShape(), rewriter.getI64Type());
    AffineMap yMap = AffineMap::get(numLoops, 0, yExprs, ctx);
    auto argmax = linalg::GenericOp::create(
        rewriter, loc, TypeRange{gradType, argType},
        ValueRange{padded, offsets},
        ValueRange{buildFilled(rewriter, loc, gradType,
                               rewriter.getFloatAttr(element, -inf)),
                   buildFilled(rewriter, loc, argType,
                               rewriter.getI64IntegerAttr(
                                   std::numeric_limits<int64_t>::max()))},
        {AffineMap::get(numLoops, 0, xExprs, ctx),
         AffineMap::get(numLoops, 0, kExprs, ctx), yMap, yMap},
        iterators(2 + s, s), [](OpBuilder &b, Location l, ValueRange a) {
          Value x = a[0], k = a[1], best = a[2], at = a[3];
          Value greater =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::UGT, x, best);
          Value equal =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, best);
          Value earlier =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, k, at);
          Value wins = arith::OrIOp::create(
              b, l, greater, arith::AndIOp::create(b, l, equal, earlier));
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, wins, x, best),
                         arith::SelectOp::create(b, l, wins, k, at)});
        });
    Value argmaxOffsets = argmax.getResult(1);

    // 2a. Windows that tile the input (kernel = stride, no dilation, no
    // padding: a 2 x 2 pool of stride 2): each position lies in one
    // window, at offset i mod s of window i floordiv s, and takes its
    // cotangent when it is that window's argmax. One pass over dx.
    if (tilesInput(op, type, gradType)) {
      ArrayRef<int64_t> kernel = op.getKernel();
      SmallVector<AffineExpr> windowExprs = {d(0), d(1)};
      for (unsigned i = 0; i < s; ++i)
        windowExprs.push_back(d(2 + i).floorDiv(w.strides[i]));
      AffineMap windowMap = AffineMap::get(2 + s, 0, windowExprs, ctx);
      Value grad = adaptor.getGrad();
      Value result = buildGeneric(
          rewriter, loc, type, buildEmpty(rewriter, loc, type),
          {argmaxOffsets, grad}, {windowMap, windowMap},
          rewriter.getMultiDimIdentityMap(2 + s), iterators(2 + s, 0),
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            // The row-major offset within the window (buildKernelOffsets).
            Value offset = arith::ConstantIntOp::create(b, l, 0, 64);
            for (unsigned i = 0; i < s; ++i) {
              Value at = arith::IndexCastOp::create(
                  b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 2 + i));
              Value within = arith::RemSIOp::create(
                  b, l, at,
                  arith::ConstantIntOp::create(b, l, w.strides[i], 64));
              offset = arith::AddIOp::create(
                  b, l,
                  arith::MulIOp::create(
                      b, l, offset,
                      arith::ConstantIntOp::create(b, l, kernel[i], 64)),
                  within);
            }
            Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              a[0], offset);
            return arith::SelectOp::create(b, l, hit, a[1],
                                           buildFloat(b, l, element, 0.0));
          });
      rewriter.replaceOp(op, result);
      return success();
    }

    // 2. Per input position: the cotangents of the windows whose argmax it
    // is. Loops: n, c, i..., k...
    SmallVector<AffineExpr> rExprs = {d(0), d(1)};
    for (unsigned i = 0; i < s; ++i)
      rExprs.push_back(d(2 + i));
    Value grad = adaptor.getGrad();
    Value result = buildGeneric(
        rewriter, loc, type,
        buildFilled(rewriter, loc, type, rewriter.getFloatAttr(element, 0.0)),
        {offsets}, {AffineMap::get(numLoops, 0, kExprs, ctx)},
        AffineMap::get(numLoops, 0, rExprs, ctx), iterators(2 + s, s),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> at = {linalg::IndexOp::create(b, l, 0),
                                   linalg::IndexOp::create(b, l, 1)};
          Value valid;
          for (unsigned i = 0; i < s; ++i)
            valid = sourceWindow(b, l, linalg::IndexOp::create(b, l, 2 + i),
                                 linalg::IndexOp::create(b, l, 2 + s + i),
                                 w.padLow[i], w.dilations[i], w.strides[i],
                                 gradType.getDimSize(2 + i), valid, at);
          Value chosen = tensor::ExtractOp::create(b, l, argmaxOffsets, at);
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            chosen, a[0]);
          Value g = tensor::ExtractOp::create(b, l, grad, at);
          Value zero = buildFloat(b, l, element, 0.0);
          Value term = arith::SelectOp::create(
              b, l, arith::AndIOp::create(b, l, valid, hit), g, zero);
          return arith::AddFOp::create(b, l, a[1], term);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateConvolutionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvLowering, ConvInputGradLowering, ConvWeightGradLowering,
               MaxPoolLowering, MaxPoolGradLowering>(patterns.getContext());
}

} // namespace lmc::lowering
