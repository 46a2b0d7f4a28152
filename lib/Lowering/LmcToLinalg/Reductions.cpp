//===- Reductions.cpp - lower lmc reductions, matmul and softmaxes --------===//

#include "LoweringUtils.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace lmc;

namespace lmc::lowering {
namespace {

Value addF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}

Value maxF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MaximumFOp::create(b, loc, x, y);
}

TypedAttr floatAttr(OpBuilder &b, Type type, double value) {
  return b.getFloatAttr(type, value);
}

TypedAttr negativeInfinity(OpBuilder &b, Type type) {
  return b.getFloatAttr(
      type, APFloat::getInf(cast<FloatType>(type).getFloatSemantics(), true));
}

/// The identity map of `rank` dims with `axis` dropped: indexes a row value
/// (one per position outside `axis`) from the full iteration space.
AffineMap dropAxisMap(OpBuilder &b, unsigned rank, int64_t axis) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (static_cast<int64_t>(d) != axis)
      exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

/// lmc.reduce_sum / reduce_max / reduce_min: one linalg.generic whose
/// reduced dimensions are reduction iterators.
template <typename ReduceOp>
struct ReduceLowering : public OpConversionPattern<ReduceOp> {
  using Combine = Value (*)(OpBuilder &, Location, Value, Value);
  ReduceLowering(MLIRContext *ctx, double init, Combine combine)
      : OpConversionPattern<ReduceOp>(ctx), init(init), combine(combine) {}

  LogicalResult
  matchAndRewrite(ReduceOp op, typename ReduceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType operandType = op.getOperand().getType();
    RankedTensorType resultType = op.getType();
    unsigned rank = operandType.getRank();
    SmallVector<AffineExpr> exprs;
    SmallVector<utils::IteratorType> iterators;
    for (unsigned d = 0; d < rank; ++d) {
      bool reduced = llvm::is_contained(op.getAxes(), d);
      iterators.push_back(reduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
      if (!reduced)
        exprs.push_back(rewriter.getAffineDimExpr(d));
      else if (op.getKeepDims())
        exprs.push_back(rewriter.getAffineConstantExpr(0));
    }
    Location loc = op.getLoc();
    Type elementType = resultType.getElementType();
    Value initTensor = buildFilled(rewriter, loc, resultType,
                                   floatAttr(rewriter, elementType, init));
    Combine fn = combine;
    Value result = buildGeneric(
        rewriter, loc, resultType, initTensor, adaptor.getOperand(),
        rewriter.getMultiDimIdentityMap(rank),
        AffineMap::get(rank, 0, exprs, op.getContext()), iterators,
        [fn](OpBuilder &b, Location l, ValueRange args) {
          return fn(b, l, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  double init;
  Combine combine;
};

Value minF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinimumFOp::create(b, loc, x, y);
}

/// lmc.matmul → linalg.matmul / linalg.batch_matmul with transposed indexing
/// maps (batch dimensions collapsed into one). For sharding, several batch
/// dimensions stay apart in a linalg.generic contraction: collapsing
/// attention's [batch, heads] would hide a split of the heads (not the
/// leading dimension of the group); lmc-collapse-batch-matmuls makes the
/// batch_matmul after partitioning.
struct MatmulLowering : public OpConversionPattern<MatmulOp> {
  MatmulLowering(MLIRContext *ctx, bool keepBatchDims)
      : OpConversionPattern<MatmulOp>(ctx), keepBatchDims(keepBatchDims) {}

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    if (keepBatchDims && rank > 3) {
      rewriter.replaceOp(op, buildContraction(rewriter, op, adaptor));
      return success();
    }
    int64_t batch = 1;
    for (int64_t d : resultType.getShape().drop_back(2))
      batch *= d;
    bool batched = rank > 2;
    auto flatten = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (!batched)
        return v;
      SmallVector<int64_t> shape{batch};
      llvm::append_range(shape, type.getShape().take_back(2));
      return buildStaticReshape(
          rewriter, loc, v,
          RankedTensorType::get(shape, type.getElementType()));
    };
    Value lhs = flatten(adaptor.getLhs()), rhs = flatten(adaptor.getRhs());
    SmallVector<int64_t> flatShape;
    if (batched)
      flatShape.push_back(batch);
    llvm::append_range(flatShape, resultType.getShape().take_back(2));
    auto flatType =
        RankedTensorType::get(flatShape, resultType.getElementType());
    Value init = buildFilled(rewriter, loc, flatType,
                             floatAttr(rewriter, flatType.getElementType(), 0));

    // Iteration dims: (b,) m, n, k.
    unsigned numDims = batched ? 4 : 3;
    auto dim = [&](unsigned i) { return rewriter.getAffineDimExpr(i); };
    unsigned m = numDims - 3, n = numDims - 2, k = numDims - 1;
    auto map = [&](ArrayRef<AffineExpr> matrix) {
      SmallVector<AffineExpr> exprs;
      if (batched)
        exprs.push_back(dim(0));
      llvm::append_range(exprs, matrix);
      return AffineMap::get(numDims, 0, exprs, op.getContext());
    };
    SmallVector<Attribute> maps{
        AffineMapAttr::get(op.getTransposeLhs() ? map({dim(k), dim(m)})
                                                : map({dim(m), dim(k)})),
        AffineMapAttr::get(op.getTransposeRhs() ? map({dim(n), dim(k)})
                                                : map({dim(k), dim(n)})),
        AffineMapAttr::get(map({dim(m), dim(n)}))};
    NamedAttribute mapsAttr =
        rewriter.getNamedAttr("indexing_maps", rewriter.getArrayAttr(maps));
    Value product =
        batched
            ? linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{flatType},
                                            ValueRange{lhs, rhs},
                                            ValueRange{init}, {mapsAttr})
                  .getResult(0)
            : linalg::MatmulOp::create(rewriter, loc, TypeRange{flatType},
                                       ValueRange{lhs, rhs}, ValueRange{init},
                                       {mapsAttr})
                  .getResult(0);
    rewriter.replaceOp(op,
                       buildStaticReshape(rewriter, loc, product, resultType));
    return success();
  }

  /// The product as one linalg.generic over (batch..., m, n, k), operands
  /// widened to the result's element type as linalg.matmul does.
  static Value buildContraction(OpBuilder &b, MatmulOp op, OpAdaptor adaptor) {
    RankedTensorType resultType = op.getType();
    unsigned batchDims = resultType.getRank() - 2;
    unsigned m = batchDims, n = batchDims + 1, k = batchDims + 2;
    MLIRContext *ctx = op.getContext();
    auto map = [&](unsigned row, unsigned column) {
      SmallVector<AffineExpr> exprs;
      for (unsigned d = 0; d < batchDims; ++d)
        exprs.push_back(getAffineDimExpr(d, ctx));
      exprs.push_back(getAffineDimExpr(row, ctx));
      exprs.push_back(getAffineDimExpr(column, ctx));
      return AffineMap::get(k + 1, 0, exprs, ctx);
    };
    SmallVector<utils::IteratorType> iterators(k,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Type elementType = resultType.getElementType();
    Value init =
        buildFilled(b, op.getLoc(), resultType, floatAttr(b, elementType, 0));
    return buildGeneric(
        b, op.getLoc(), resultType, init,
        ValueRange{adaptor.getLhs(), adaptor.getRhs()},
        {op.getTransposeLhs() ? map(k, m) : map(m, k),
         op.getTransposeRhs() ? map(n, k) : map(k, n)},
        map(m, n), iterators,
        [elementType](OpBuilder &b, Location l, ValueRange args) -> Value {
          auto widen = [&](Value v) -> Value {
            return v.getType() == elementType
                       ? v
                       : arith::ExtFOp::create(b, l, elementType, v);
          };
          Value lhs = widen(args[0]);
          Value rhs = widen(args[1]);
          Value product = arith::MulFOp::create(b, l, lhs, rhs);
          return arith::AddFOp::create(b, l, args[2], product);
        });
  }

  bool keepBatchDims;
};

/// Row statistics of a softmax along `axis`: the maximum and the sum of
/// exp(x - max).
struct SoftmaxStats {
  Value max, sumExp;
};

SoftmaxStats buildSoftmaxStats(OpBuilder &b, Location loc, Value x,
                               int64_t axis) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Type elementType = type.getElementType();
  Value max =
      buildReduceAlong(b, loc, x, axis, negativeInfinity(b, elementType), maxF);
  auto rowType = cast<RankedTensorType>(max.getType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[axis] = utils::IteratorType::reduction;
  Value sumExp = buildGeneric(
      b, loc, rowType,
      buildFilled(b, loc, rowType, floatAttr(b, elementType, 0.0)),
      ValueRange{x, max},
      {b.getMultiDimIdentityMap(rank), dropAxisMap(b, rank, axis)},
      dropAxisMap(b, rank, axis), iterators,
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value shifted = arith::SubFOp::create(nb, l, args[0], args[1]);
        return addF(nb, l, math::ExpOp::create(nb, l, shifted), args[2]);
      });
  return {max, sumExp};
}

/// An elementwise generic over `x`'s shape whose body also sees the row
/// statistics.
Value buildWithRowStats(OpBuilder &b, Location loc, Value x, int64_t axis,
                        SoftmaxStats stats, BodyBuilder body) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap row = dropAxisMap(b, rank, axis);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return buildGeneric(b, loc, type, buildEmpty(b, loc, type),
                      ValueRange{x, stats.max, stats.sumExp},
                      {identity, row, row}, identity, iterators, body);
}

struct SoftmaxLowering : public OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    int64_t axis = op.getAxis();
    SoftmaxStats stats = buildSoftmaxStats(rewriter, loc, x, axis);
    rewriter.replaceOp(
        op,
        buildWithRowStats(rewriter, loc, x, axis, stats,
                          [](OpBuilder &b, Location l, ValueRange a) -> Value {
                            Value e = math::ExpOp::create(
                                b, l, arith::SubFOp::create(b, l, a[0], a[1]));
                            return arith::DivFOp::create(b, l, e, a[2]);
                          }));
    return success();
  }
};

struct LogSoftmaxLowering : public OpConversionPattern<LogSoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LogSoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getOperand();
    int64_t axis = op.getAxis();
    SoftmaxStats stats = buildSoftmaxStats(rewriter, loc, x, axis);
    rewriter.replaceOp(
        op, buildWithRowStats(
                rewriter, loc, x, axis, stats,
                [](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
                  return arith::SubFOp::create(b, l, shifted,
                                               math::LogOp::create(b, l, a[2]));
                }));
    return success();
  }
};

/// `c == labels[n]` inside a generic over (n, c).
Value isLabel(OpBuilder &b, Location loc, Value label) {
  Value c = linalg::IndexOp::create(b, loc, 1);
  Value labelIndex =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), label);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c, labelIndex);
}

/// `labels[n]` as an index and whether it names a class of `classes`. A
/// label outside [0, classes) picks no logit (the compare form's meaning)
/// and is read as class 0 instead, never out of bounds.
std::pair<Value, Value> labelIndex(OpBuilder &b, Location loc, Value label,
                                   int64_t classes) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), label);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value inRange = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                            arith::ConstantIndexOp::create(b, loc, classes)));
  return {arith::SelectOp::create(b, loc, inRange, i, zero), inRange};
}

/// Whether a row with `label` counts in a cross-entropy: always, or with
/// `ignore` (PyTorch's ignore_index) when the label differs from it.
Value isCounted(OpBuilder &b, Location loc, Value label,
                std::optional<int64_t> ignore) {
  if (!ignore)
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  Value ignored = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(label.getType(), *ignore));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, label,
                               ignored);
}

/// The divisor of a cross-entropy's mean with ignore_index `ignore`, a
/// rank-0 tensor: the rows whose label differs from it, at least 1 (a batch
/// with none counted has loss and gradient 0). Exact to 2^24 rows in f32
/// (the loss stays in f32 under mixed precision).
Value buildCountedRows(OpBuilder &b, Location loc, Value labels, int64_t ignore,
                       Type elementType) {
  auto scalarType = RankedTensorType::get({}, elementType);
  Value count = buildGeneric(
      b, loc, scalarType,
      buildFilled(b, loc, scalarType, floatAttr(b, elementType, 0.0)), labels,
      b.getMultiDimIdentityMap(1), AffineMap::get(1, 0, {}, b.getContext()),
      {utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value plusOne = arith::AddFOp::create(
            nb, l, a[1], buildFloat(nb, l, elementType, 1.0));
        return arith::SelectOp::create(nb, l, isCounted(nb, l, a[0], ignore),
                                       plusOne, a[1]);
      });
  return buildElementwise(
      b, loc, scalarType, count,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(nb, l, a[0],
                                         buildFloat(nb, l, elementType, 1.0));
      });
}

/// Softmax cross-entropy and its gradient. When the lowering need not stay
/// shardable they read each row's label logit directly (a gather per row)
/// instead of comparing every class with the label: the [N, C] logits of
/// a language model's head (GPT-2: 1024 x 50304) are then read once less
/// in the forward, and the gradient's pass over them is a plain
/// elementwise loop the vectorizer widens (the i64 compare held it to four
/// lanes). Sharding propagation sees neither a gather inside a body nor a
/// loop, so the sharded lowering keeps the compare form.
struct SoftmaxCrossEntropyLowering
    : public OpConversionPattern<SoftmaxCrossEntropyOp> {
  SoftmaxCrossEntropyLowering(MLIRContext *ctx, bool shardable)
      : OpConversionPattern<SoftmaxCrossEntropyOp>(ctx), shardable(shardable) {}

  LogicalResult
  matchAndRewrite(SoftmaxCrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = adaptor.getLogits(), labels = adaptor.getLabels();
    auto logitsType = cast<RankedTensorType>(logits.getType());
    Type elementType = logitsType.getElementType();
    int64_t rows = logitsType.getDimSize(0);
    SoftmaxStats stats = buildSoftmaxStats(rewriter, loc, logits, 1);
    auto scalarType = RankedTensorType::get({}, elementType);
    Value zeroTotal = buildFilled(rewriter, loc, scalarType,
                                  floatAttr(rewriter, elementType, 0.0));
    std::optional<int64_t> ignore = op.getIgnoreIndex();
    Value total = shardable ? sumByComparing(rewriter, loc, logits, labels,
                                             stats, zeroTotal, ignore)
                            : sumByPicking(rewriter, loc, logits, labels, stats,
                                           zeroTotal, ignore);
    SmallVector<Value> operands{total};
    if (ignore)
      operands.push_back(
          buildCountedRows(rewriter, loc, labels, *ignore, elementType));
    Value mean = buildElementwise(
        rewriter, loc, scalarType, operands,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::DivFOp::create(
              b, l, a[0],
              ignore ? a[1] : buildFloat(b, l, elementType, double(rows)));
        });
    rewriter.replaceOp(op, mean);
    return success();
  }

  /// Sum over the counted rows of max + log(sumexp) - logits[n, label[n]]:
  /// one reduction over the rows that gathers each row's label logit.
  static Value sumByPicking(OpBuilder &rewriter, Location loc, Value logits,
                            Value labels, SoftmaxStats stats, Value init,
                            std::optional<int64_t> ignore) {
    int64_t classes = cast<RankedTensorType>(logits.getType()).getDimSize(1);
    AffineMap row = rewriter.getMultiDimIdentityMap(1);
    AffineMap scalar = AffineMap::get(1, 0, {}, rewriter.getContext());
    return buildGeneric(
        rewriter, loc, cast<RankedTensorType>(init.getType()), init,
        ValueRange{labels, stats.max, stats.sumExp}, {row, row, row}, scalar,
        {utils::IteratorType::reduction},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value lse = addF(b, l, a[1], math::LogOp::create(b, l, a[2]));
          auto [label, inRange] = labelIndex(b, l, a[0], classes);
          Value n = linalg::IndexOp::create(b, l, 0);
          Value logit =
              tensor::ExtractOp::create(b, l, logits, ValueRange{n, label});
          Value zero = buildFloat(b, l, logit.getType(), 0.0);
          Value picked = arith::SelectOp::create(b, l, inRange, logit, zero);
          Value term = arith::SelectOp::create(
              b, l, isCounted(b, l, a[0], ignore),
              arith::SubFOp::create(b, l, lse, picked), zero);
          return addF(b, l, a[3], term);
        });
  }

  /// The same sum as one reduction over (n, c): each row adds its
  /// log-sum-exp once (at c == 0) and subtracts the logit where c equals
  /// its label.
  static Value sumByComparing(OpBuilder &rewriter, Location loc, Value logits,
                              Value labels, SoftmaxStats stats, Value init,
                              std::optional<int64_t> ignore) {
    AffineMap full = rewriter.getMultiDimIdentityMap(2);
    AffineMap row = dropAxisMap(rewriter, 2, 1);
    AffineMap scalar = AffineMap::get(2, 0, {}, rewriter.getContext());
    return buildGeneric(
        rewriter, loc, cast<RankedTensorType>(init.getType()), init,
        ValueRange{logits, labels, stats.max, stats.sumExp},
        {full, row, row, row}, scalar,
        {utils::IteratorType::reduction, utils::IteratorType::reduction},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value lse = addF(b, l, a[2], math::LogOp::create(b, l, a[3]));
          Value zero = buildFloat(b, l, a[0].getType(), 0.0);
          Value c0 = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, linalg::IndexOp::create(b, l, 1),
              arith::ConstantIndexOp::create(b, l, 0));
          Value rowTerm = arith::SelectOp::create(b, l, c0, lse, zero);
          Value picked =
              arith::SelectOp::create(b, l, isLabel(b, l, a[1]), a[0], zero);
          Value term = arith::SelectOp::create(
              b, l, isCounted(b, l, a[1], ignore),
              arith::SubFOp::create(b, l, rowTerm, picked), zero);
          return addF(b, l, a[4], term);
        });
  }

  bool shardable;
};

struct SoftmaxCrossEntropyGradLowering
    : public OpConversionPattern<SoftmaxCrossEntropyGradOp> {
  SoftmaxCrossEntropyGradLowering(MLIRContext *ctx, bool shardable)
      : OpConversionPattern<SoftmaxCrossEntropyGradOp>(ctx),
        shardable(shardable) {}

  LogicalResult
  matchAndRewrite(SoftmaxCrossEntropyGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = adaptor.getLogits(), labels = adaptor.getLabels(),
          cotangent = adaptor.getCotangent();
    auto logitsType = cast<RankedTensorType>(logits.getType());
    Type elementType = logitsType.getElementType();
    int64_t rows = logitsType.getDimSize(0);
    SoftmaxStats stats = buildSoftmaxStats(rewriter, loc, logits, 1);
    AffineMap full = rewriter.getMultiDimIdentityMap(2);
    AffineMap row = dropAxisMap(rewriter, 2, 1);
    AffineMap scalar = AffineMap::get(2, 0, {}, op.getContext());
    // (p - onehot) * cotangent / N, with p = e^(x - max) / sumexp: the
    // division by N on the scalar cotangent, as before the elementwise
    // product. With ignore_index, N is the counted rows (a scalar input,
    // `counted`) and the other rows' gradient is 0.
    std::optional<int64_t> ignore = op.getIgnoreIndex();
    Value counted =
        ignore ? buildCountedRows(rewriter, loc, labels, *ignore, elementType)
               : Value();
    auto gradient = [&](OpBuilder &b, Location l, Value x, Value max,
                        Value sumExp, Value oneHot, Value cot,
                        Value count) -> Value {
      Value e = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, max));
      Value prob = arith::DivFOp::create(b, l, e, sumExp);
      Value scale = arith::DivFOp::create(
          b, l, cot,
          count ? count : buildFloat(b, l, elementType, double(rows)));
      return arith::MulFOp::create(
          b, l, arith::SubFOp::create(b, l, prob, oneHot), scale);
    };
    Value zero = buildFloat(rewriter, loc, elementType, 0.0);
    Value one = buildFloat(rewriter, loc, elementType, 1.0);
    // The inputs every element reads (and the counted rows' divisor).
    SmallVector<Value> inputs{logits, labels, stats.max, stats.sumExp,
                              cotangent};
    SmallVector<AffineMap> maps{full, row, row, row, scalar};
    if (counted) {
      inputs.push_back(counted);
      maps.push_back(scalar);
    }
    auto rowGradient = [&](OpBuilder &b, Location l, ValueRange a,
                           Value oneHot) -> Value {
      Value value = gradient(b, l, a[0], a[2], a[3], oneHot, a[4],
                             counted ? a[5] : Value());
      if (!counted)
        return value;
      return arith::SelectOp::create(b, l, isCounted(b, l, a[1], ignore), value,
                                     zero);
    };
    if (shardable) {
      Value grad = buildGeneric(
          rewriter, loc, logitsType, buildEmpty(rewriter, loc, logitsType),
          inputs, maps, full,
          {utils::IteratorType::parallel, utils::IteratorType::parallel},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value oneHot =
                arith::SelectOp::create(b, l, isLabel(b, l, a[1]), one, zero);
            return rowGradient(b, l, a, oneHot);
          });
      rewriter.replaceOp(op, grad);
      return success();
    }
    // Every class as if none were the label (p - 0 is p, bit for bit), then
    // each counted row's label entry rewritten with onehot 1. The labels
    // are read here only to zero the ignored rows.
    if (!counted) {
      inputs.erase(inputs.begin() + 1);
      maps.erase(maps.begin() + 1);
    }
    Value grad = buildGeneric(
        rewriter, loc, logitsType, buildEmpty(rewriter, loc, logitsType),
        inputs, maps, full,
        {utils::IteratorType::parallel, utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          if (!counted)
            return gradient(b, l, a[0], a[1], a[2], zero, a[3], Value());
          return rowGradient(b, l, a, zero);
        });
    Value cot = tensor::ExtractOp::create(rewriter, loc, cotangent);
    auto loop = scf::ForOp::create(
        rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, 0),
        arith::ConstantIndexOp::create(rewriter, loc, rows),
        arith::ConstantIndexOp::create(rewriter, loc, 1), ValueRange{grad},
        [&](OpBuilder &b, Location l, Value n, ValueRange acc) {
          Value rowLabel = tensor::ExtractOp::create(b, l, labels, n);
          auto [label, inRange] =
              labelIndex(b, l, rowLabel, logitsType.getDimSize(1));
          Value write =
              counted ? arith::AndIOp::create(b, l, inRange,
                                              isCounted(b, l, rowLabel, ignore))
                            .getResult()
                      : inRange;
          auto ifLabel = scf::IfOp::create(
              b, l, write,
              [&](OpBuilder &tb, Location tl) {
                Value x = tensor::ExtractOp::create(tb, tl, logits,
                                                    ValueRange{n, label});
                // Read here, inside the loop: a read before it would be a
                // host access between kernels for --target cuda.
                Value count =
                    counted
                        ? tensor::ExtractOp::create(tb, tl, counted).getResult()
                        : Value();
                Value value = gradient(
                    tb, tl, x, tensor::ExtractOp::create(tb, tl, stats.max, n),
                    tensor::ExtractOp::create(tb, tl, stats.sumExp, n), one,
                    cot, count);
                scf::YieldOp::create(
                    tb, tl,
                    ValueRange{tensor::InsertOp::create(tb, tl, value, acc[0],
                                                        ValueRange{n, label})});
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, acc[0]);
              });
          scf::YieldOp::create(b, l, ifLabel.getResults());
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }

  bool shardable;
};

} // namespace

/// lmc.cumsum (integers): result[..., j, ...] adds operand[..., i, ...]
/// over an extra reduction dimension i, keeping the i inside the triangle
/// the attributes choose. Quadratic along the axis, like the float form
/// (a matmul by a triangle), and exact.
struct CumSumLowering : public OpConversionPattern<CumSumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    MLIRContext *ctx = op.getContext();
    unsigned rank = type.getRank();
    int64_t axis = op.getAxis();
    SmallVector<AffineExpr> source;
    for (unsigned d = 0; d < rank; ++d)
      source.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    AffineMap sourceMap = AffineMap::get(rank + 1, 0, source, ctx);
    SmallVector<AffineExpr> target;
    for (unsigned d = 0; d < rank; ++d)
      target.push_back(getAffineDimExpr(d, ctx));
    AffineMap targetMap = AffineMap::get(rank + 1, 0, target, ctx);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    // i (the summed position) against j (the result's position).
    arith::CmpIPredicate keep =
        op.getReverse() ? (op.getExclusive() ? arith::CmpIPredicate::ugt
                                             : arith::CmpIPredicate::uge)
                        : (op.getExclusive() ? arith::CmpIPredicate::ult
                                             : arith::CmpIPredicate::ule);
    Value init = buildFilled(rewriter, op.getLoc(), type,
                             rewriter.getIntegerAttr(type.getElementType(), 0));
    Value result = buildGeneric(
        rewriter, op.getLoc(), type, init, adaptor.getOperand(), sourceMap,
        targetMap, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value i = linalg::IndexOp::create(b, l, rank);
          Value j = linalg::IndexOp::create(b, l, axis);
          Value inside = arith::CmpIOp::create(b, l, keep, i, j);
          Value sum = arith::AddIOp::create(b, l, args[1], args[0]);
          return arith::SelectOp::create(b, l, inside, sum, args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

void populateReductionLoweringPatterns(RewritePatternSet &patterns,
                                       bool shardable) {
  MLIRContext *ctx = patterns.getContext();
  double inf = std::numeric_limits<double>::infinity();
  patterns.add<ReduceLowering<ReduceSumOp>>(ctx, 0.0, addF);
  patterns.add<ReduceLowering<ReduceMaxOp>>(ctx, -inf, maxF);
  patterns.add<ReduceLowering<ReduceMinOp>>(ctx, inf, minF);
  patterns.add<MatmulLowering>(ctx, shardable);
  patterns.add<SoftmaxLowering, LogSoftmaxLowering, CumSumLowering>(ctx);
  patterns.add<SoftmaxCrossEntropyLowering, SoftmaxCrossEntropyGradLowering>(
      ctx, shardable);
}

} // namespace lmc::lowering
