//===- Reductions.cpp - the Reduce ops, Softmax, LogSoftmax ---------------===//
//
// ReduceSum/Mean/Max/Min map to lmc's reductions; ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum and ReduceLogSumExp are sums of a
// transformed operand (|x|, x², exp(x − max)) with a transformed result
// (sqrt, log), so their VJPs come from those ops'; ReduceProd is
// sign · exp(Σ log|x|) with zeros handled. ArgMax, ArgMin and
// Hardmax find indices with float arithmetic (buildArgIndex).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

enum class Reduction {
  Sum, Mean, Max, Min, L1, L2, SumSquare, LogSum, LogSumExp, Prod
};

/// A Reduce op: axes come from input 1 when `axesAsInput`, else from the
/// `axes` attribute.
LogicalResult importReduce(NodeImporter &n, Reduction kind, bool axesAsInput) {
  bool mean = kind == Reduction::Mean;
  SmallVector<StringRef> allowed = {"keepdims"};
  if (!axesAsInput)
    allowed.push_back("axes");
  // noop_with_empty_axes came with the axes input (ReduceSum 13, the other
  // reductions 18).
  if (axesAsInput)
    allowed.push_back("noop_with_empty_axes");
  if (failed(n.checkArity(1, axesAsInput ? 2 : 1)) ||
      failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<int64_t> keepDims = n.intAttr("keepdims", 1);
  FailureOr<int64_t> noop = n.intAttr("noop_with_empty_axes", 0);
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(keepDims) || failed(noop) || failed(operand))
    return failure();
  auto type = cast<RankedTensorType>(operand->getType());
  int64_t rank = type.getRank();

  FailureOr<std::optional<SmallVector<int64_t>>> given = n.axes(axesAsInput);
  if (failed(given))
    return failure();
  SmallVector<int64_t> axes = given->value_or(SmallVector<int64_t>());
  if (axes.empty()) {
    if (*noop)
      return n.setResult(*operand);
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  FailureOr<SmallVector<int64_t>> normalized = n.normalizeAxes(axes, rank);
  if (failed(normalized))
    return failure();
  if (normalized->empty()) // rank 0: nothing to reduce
    return n.setResult(*operand);

  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(*normalized, d))
      shape.push_back(type.getDimSize(d));
    else {
      count *= type.getDimSize(d);
      if (*keepDims)
        shape.push_back(1);
    }
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (count == 0 && (kind == Reduction::Max || kind == Reduction::Min ||
                     kind == Reduction::LogSumExp))
    return n.error() << "reducing an empty dimension";
  OpBuilder &b = n.b;
  Location loc = n.loc;
  Value x = *operand, result;
  auto sum = [&](Value v) -> Value {
    return ReduceSumOp::create(b, loc, resultType, v, *normalized,
                               *keepDims != 0);
  };
  switch (kind) {
  case Reduction::Max:
    result = ReduceMaxOp::create(b, loc, resultType, x, *normalized,
                                 *keepDims != 0);
    break;
  case Reduction::Min:
    result = ReduceMinOp::create(b, loc, resultType, x, *normalized,
                                 *keepDims != 0);
    break;
  case Reduction::Sum:
  case Reduction::Mean:
    result = sum(x);
    break;
  case Reduction::L1:
    result = sum(AbsOp::create(b, loc, x));
    break;
  case Reduction::L2:
    result = SqrtOp::create(b, loc, sum(MulOp::create(b, loc, x, x)));
    break;
  case Reduction::SumSquare:
    result = sum(MulOp::create(b, loc, x, x));
    break;
  case Reduction::LogSum:
    result = LogOp::create(b, loc, sum(x));
    break;
  case Reduction::Prod: {
    // sign * exp(sum(log|x|)), 0 where a factor is 0; the sign is
    // cos(pi * negatives), exactly +-1 for the counts of one reduction.
    Value zero = buildSplatLike(b, loc, x, 0.0), one = buildSplatLike(b, loc, x, 1.0);
    Value isZero = buildCompare(b, loc, CmpPredicate::eq, x, zero);
    Value magnitude = buildSelect(b, loc, isZero, one, AbsOp::create(b, loc, x));
    Value logSum = sum(LogOp::create(b, loc, magnitude));
    Value negatives = sum(buildSelect(b, loc, buildCompare(b, loc, CmpPredicate::lt, x, zero),
                                      one, zero));
    Value zeros = sum(buildSelect(b, loc, isZero, one, zero));
    Value sign = CosOp::create(
        b, loc, MulOp::create(b, loc, negatives,
                              buildSplatLike(b, loc, negatives, M_PI)));
    Value product = MulOp::create(b, loc, sign, ExpOp::create(b, loc, logSum));
    Value resultZero = buildSplatLike(b, loc, product, 0.0);
    result = buildSelect(b, loc, buildCompare(b, loc, CmpPredicate::gt, zeros, resultZero),
                         resultZero, product);
    break;
  }
  case Reduction::LogSumExp: {
    // max + log(sum(exp(x - max))): no overflow for large x.
    SmallVector<int64_t> keptShape(type.getShape());
    for (int64_t d : *normalized)
      keptShape[d] = 1;
    Value max = ReduceMaxOp::create(
        b, loc, RankedTensorType::get(keptShape, type.getElementType()), x,
        *normalized, true);
    Value shifted =
        SubOp::create(b, loc, x, buildNumpyBroadcast(b, loc, max, type.getShape()));
    Value logSum = LogOp::create(b, loc, sum(ExpOp::create(b, loc, shifted)));
    result = AddOp::create(b, loc, logSum, buildReshape(b, loc, max, shape));
    break;
  }
  }
  if (mean) {
    double scale = count == 0 ? std::numeric_limits<double>::quiet_NaN()
                              : 1.0 / static_cast<double>(count);
    result = MulOp::create(n.b, n.loc, resultType, result,
                           buildSplat(n.b, n.loc, resultType, scale));
  }
  return n.setResult(result);
}

LogicalResult importReduceSum(NodeImporter &n) {
  return importReduce(n, Reduction::Sum, /*axesAsInput=*/n.opset >= 13);
}

/// The index along `axis` of the first (or `last`) maximum (or minimum) of
/// `x`, as a float (exact below 2^24) with `axis` kept at size 1: the
/// positions where x equals its extremum keep their index, the others a
/// sentinel, and a min (first) or max (last) reduction picks one.
Value buildArgIndex(OpBuilder &b, Location loc, Value x, int64_t axis,
                    bool isMax, bool last) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> kept(type.getShape()), axes{axis};
  kept[axis] = 1;
  auto keptType = RankedTensorType::get(kept, type.getElementType());
  auto reduce = [&](bool max, Value v) -> Value {
    if (max)
      return ReduceMaxOp::create(b, loc, keptType, v, axes, true);
    return ReduceMinOp::create(b, loc, keptType, v, axes, true);
  };
  Value extremum = reduce(isMax, x);
  Value hit = buildCompare(
      b, loc, CmpPredicate::eq, x, buildNumpyBroadcast(b, loc, extremum, type.getShape()));
  Value miss = buildSplatLike(
      b, loc, x, last ? -1.0 : double(type.getDimSize(axis)));
  return reduce(last, buildSelect(b, loc, hit, buildIota(b, loc, type, axis),
                                  miss));
}

/// An axis of up to 2^24 entries (float indices are exact below that).
LogicalResult checkIndexableAxis(NodeImporter &n, RankedTensorType type,
                                 int64_t axis) {
  int64_t size = type.getDimSize(axis);
  if (size == 0)
    return n.error() << "reducing an empty dimension";
  if (size > (int64_t(1) << 24))
    return n.error() << "axis of " << size
                     << " entries: indices beyond 2^24 are not exact in f32";
  return success();
}

/// ArgMax / ArgMin: buildArgIndex, then lmc.convert to i64.
template <bool isMax> LogicalResult importArgExtremum(NodeImporter &n) {
  SmallVector<StringRef> allowed = {"axis", "keepdims"};
  if (n.opset >= 12)
    allowed.push_back("select_last_index");
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<int64_t> axisAttr = n.intAttr("axis", 0);
  FailureOr<int64_t> keepDims = n.intAttr("keepdims", 1);
  FailureOr<int64_t> last = n.intAttr("select_last_index", 0);
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(axisAttr) || failed(keepDims) || failed(last) || failed(operand))
    return failure();
  auto type = cast<RankedTensorType>(operand->getType());
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, type.getRank());
  if (failed(axis) || failed(checkIndexableAxis(n, type, *axis)))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != *axis || *keepDims)
      shape.push_back(d == *axis ? 1 : type.getDimSize(d));
  Value index =
      buildArgIndex(n.b, n.loc, *operand, *axis, isMax, *last != 0);
  index = buildReshape(n.b, n.loc, index, shape);
  return n.setResult(ConvertOp::create(
      n.b, n.loc, RankedTensorType::get(shape, n.b.getI64Type()), index));
}

/// Integer CumSum: folded on constants (wrapping as the run-time form
/// does), else an lmc.cumsum.
LogicalResult importIntegerCumSum(NodeImporter &n, RankedTensorType type,
                                  int64_t axis, bool exclusive, bool reverse) {
  DenseElementsAttr constant = n.constantInput(0);
  if (!foldable(constant, type)) {
    FailureOr<Value> operand = n.numericInput(0);
    if (failed(operand))
      return failure();
    return n.setResult(CumSumOp::create(n.b, n.loc, type, *operand, axis,
                                        exclusive, reverse));
  }
  SmallVector<int64_t> values = intValues(constant);
  if (constant.isSplat())
    values.assign(type.getNumElements(), values.front());
  int64_t size = type.getDimSize(axis), inner = 1;
  for (int64_t d = axis + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  SmallVector<APInt> sums(values.size(), APInt(width, 0));
  for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
    int64_t position = (i / inner) % size, rowStart = i - position * inner;
    for (int64_t j = 0; j < size; ++j) {
      bool inside = reverse ? j >= position : j <= position;
      if (exclusive && j == position)
        inside = false;
      if (inside)
        sums[i] += APInt(width, values[rowStart + j * inner], /*isSigned=*/true,
                         /*implicitTrunc=*/true);
    }
  }
  return n.setConstantResult(DenseElementsAttr::get(type, sums));
}

/// CumSum: the axis moved last, multiplied by a constant 0/1 triangle
/// (exclusive: strict; reverse: the other triangle), moved back; its VJP is
/// the matmul's. Integers (position ids from a mask) have no gradient:
/// importIntegerCumSum.
LogicalResult importCumSum(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) ||
      failed(n.checkAttributes({"exclusive", "reverse"})))
    return failure();
  FailureOr<int64_t> exclusive = n.intAttr("exclusive", 0);
  FailureOr<int64_t> reverse = n.intAttr("reverse", 0);
  FailureOr<RankedTensorType> operandType = n.inputType(0);
  FailureOr<SmallVector<int64_t>> axisValues = n.intsInput(1, "axis");
  if (failed(exclusive) || failed(reverse) || failed(operandType) ||
      failed(axisValues))
    return failure();
  RankedTensorType type = *operandType;
  int64_t rank = type.getRank();
  if (axisValues->size() != 1)
    return n.error() << "axis must be one integer";
  FailureOr<int64_t> axis = n.normalizeAxis(axisValues->front(), rank);
  if (failed(axis))
    return failure();
  if (isa<IntegerType>(type.getElementType()))
    return importIntegerCumSum(n, type, *axis, *exclusive != 0, *reverse != 0);
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(operand))
    return failure();
  int64_t size = type.getDimSize(*axis);
  if (size * size > kMaxFoldedElements)
    return n.error() << "an axis of " << size
                     << " entries is too long for the triangular product";
  OpBuilder &b = n.b;
  Location loc = n.loc;
  SmallVector<int64_t> perm = axisLastPermutation(rank, *axis), moved;
  for (int64_t p : perm)
    moved.push_back(type.getDimSize(p));
  Type element = type.getElementType();
  Value x = buildPermute(b, loc, *operand, perm);
  int64_t rows = type.getNumElements() / std::max<int64_t>(size, 1);
  x = buildReshape(b, loc, x, {rows, size});
  // out[j] = sum over i of x[i] * triangle[i][j].
  SmallVector<double> triangle;
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < size; ++j) {
      bool inside = *reverse ? i >= j : i <= j;
      if (*exclusive && i == j)
        inside = false;
      triangle.push_back(inside ? 1.0 : 0.0);
    }
  Value m = arith::ConstantOp::create(
      b, loc,
      constantFromDoubles(RankedTensorType::get({size, size}, element),
                          triangle));
  x = MatmulOp::create(b, loc, RankedTensorType::get({rows, size}, element), x,
                       m, false, false);
  x = buildReshape(b, loc, x, moved);
  SmallVector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  return n.setResult(buildPermute(b, loc, x, inverse));
}

/// MeanVarianceNormalization: (x - E[x]) / (sqrt(E[(x - E[x])^2]) + 1e-9)
/// over `axes` (default N, H, W), as the ONNX function defines it.
LogicalResult importMeanVarianceNormalization(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"axes"})))
    return failure();
  FailureOr<Value> operand = n.floatInput(0);
  FailureOr<std::optional<SmallVector<int64_t>>> given = n.intsAttr("axes");
  if (failed(operand) || failed(given))
    return failure();
  auto type = cast<RankedTensorType>(operand->getType());
  FailureOr<SmallVector<int64_t>> axes = n.normalizeAxes(
      given->value_or(SmallVector<int64_t>{0, 2, 3}), type.getRank());
  if (failed(axes))
    return failure();
  int64_t count = 1;
  SmallVector<int64_t> kept(type.getShape());
  for (int64_t a : *axes) {
    count *= type.getDimSize(a);
    kept[a] = 1;
  }
  if (count == 0)
    return n.error() << "reducing an empty dimension";
  OpBuilder &b = n.b;
  Location loc = n.loc;
  auto keptType = RankedTensorType::get(kept, type.getElementType());
  auto mean = [&](Value v) -> Value {
    Value s = ReduceSumOp::create(b, loc, keptType, v, *axes, true);
    s = MulOp::create(b, loc, s, buildSplatLike(b, loc, s, 1.0 / double(count)));
    return buildNumpyBroadcast(b, loc, s, type.getShape());
  };
  Value centered = SubOp::create(b, loc, *operand, mean(*operand));
  Value deviation = SqrtOp::create(b, loc, mean(MulOp::create(b, loc, centered, centered)));
  Value denominator =
      AddOp::create(b, loc, deviation, buildSplatLike(b, loc, deviation, 1e-9));
  return n.setResult(DivOp::create(b, loc, centered, denominator));
}

/// The reductions whose axes became an input at opset 18 (all but
/// ReduceSum).
template <Reduction kind> LogicalResult importReduce18(NodeImporter &n) {
  return importReduce(n, kind, /*axesAsInput=*/n.opset >= 18);
}

/// Softmax, LogSoftmax, Hardmax: `build(x, axis)` along one axis (default
/// -1 from opset 13). Before opset 13 the input is coerced to 2-D
/// [prod(<axis), prod(>=axis)] and normalized over the second dimension:
/// one softmax over all the trailing dimensions together.
template <typename Build>
LogicalResult importAlongAxis(NodeImporter &n, Build build) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"axis"})))
    return failure();
  FailureOr<int64_t> axis = n.intAttr("axis", n.opset >= 13 ? -1 : 1);
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(axis) || failed(operand))
    return failure();
  auto type = cast<RankedTensorType>(operand->getType());
  int64_t rank = type.getRank();
  if (rank == 0)
    return n.error() << "operand must have rank >= 1";
  FailureOr<int64_t> normalized = n.normalizeAxis(*axis, rank);
  if (failed(normalized))
    return failure();
  if (n.opset < 13 && *normalized != rank - 1) {
    int64_t rows = 1;
    for (int64_t d = 0; d < *normalized; ++d)
      rows *= type.getDimSize(d);
    Value flat = buildReshape(
        n.b, n.loc, *operand,
        {rows, type.getNumElements() / std::max<int64_t>(rows, 1)});
    FailureOr<Value> result = build(flat, 1);
    if (failed(result))
      return failure();
    return n.setResult(buildReshape(n.b, n.loc, *result, type.getShape()));
  }
  FailureOr<Value> result = build(*operand, *normalized);
  if (failed(result))
    return failure();
  return n.setResult(*result);
}

template <typename OpTy> LogicalResult importSoftmax(NodeImporter &n) {
  return importAlongAxis(n, [&](Value x, int64_t axis) -> FailureOr<Value> {
    return OpTy::create(n.b, n.loc, x.getType(), x, axis).getResult();
  });
}

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
LogicalResult importHardmax(NodeImporter &n) {
  return importAlongAxis(n, [&](Value x, int64_t axis) -> FailureOr<Value> {
    auto type = cast<RankedTensorType>(x.getType());
    if (failed(checkIndexableAxis(n, type, axis)))
      return failure();
    Value index = buildArgIndex(n.b, n.loc, x, axis, true, false);
    Value hit = buildCompare(
        n.b, n.loc, CmpPredicate::eq, buildIota(n.b, n.loc, type, axis),
        buildNumpyBroadcast(n.b, n.loc, index, type.getShape()));
    return buildSelect(n.b, n.loc, hit, buildSplatLike(n.b, n.loc, x, 1.0),
                       buildSplatLike(n.b, n.loc, x, 0.0));
  });
}

} // namespace

void registerReductionOps(OpTable &table) {
  table["ReduceSum"] = importReduceSum;
  table["ReduceMean"] = importReduce18<Reduction::Mean>;
  table["ReduceMax"] = importReduce18<Reduction::Max>;
  table["ReduceMin"] = importReduce18<Reduction::Min>;
  table["ReduceL1"] = importReduce18<Reduction::L1>;
  table["ReduceL2"] = importReduce18<Reduction::L2>;
  table["ReduceSumSquare"] = importReduce18<Reduction::SumSquare>;
  table["ReduceLogSum"] = importReduce18<Reduction::LogSum>;
  table["ReduceLogSumExp"] = importReduce18<Reduction::LogSumExp>;
  table["ReduceProd"] = importReduce18<Reduction::Prod>;
  table["ArgMax"] = importArgExtremum<true>;
  table["ArgMin"] = importArgExtremum<false>;
  table["Hardmax"] = importHardmax;
  table["CumSum"] = importCumSum;
  table["MeanVarianceNormalization"] = importMeanVarianceNormalization;
  table["Softmax"] = importSoftmax<SoftmaxOp>;
  table["LogSoftmax"] = importSoftmax<LogSoftmaxOp>;
}

} // namespace lmc::onnx_import
