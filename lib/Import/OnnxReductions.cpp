//===- OnnxReductions.cpp - the Reduce ops, Softmax, LogSoftmax -----------===//
//
// ReduceSum/Mean/Max/Min map to lmc's reductions; ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum and ReduceLogSumExp are sums of a
// transformed operand (|x|, x², exp(x − max)) with a transformed result
// (sqrt, log), so their VJPs come from those ops'.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

enum class Reduction { Sum, Mean, Max, Min, L1, L2, SumSquare, LogSum, LogSumExp };

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

/// The reductions whose axes became an input at opset 18 (all but
/// ReduceSum).
template <Reduction kind> LogicalResult importReduce18(NodeImporter &n) {
  return importReduce(n, kind, /*axesAsInput=*/n.opset >= 18);
}

template <typename OpTy>
LogicalResult importSoftmax(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"axis"})))
    return failure();
  FailureOr<int64_t> axis = n.intAttr("axis", n.opset >= 13 ? -1 : 1);
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(axis) || failed(operand))
    return failure();
  int64_t rank = cast<RankedTensorType>(operand->getType()).getRank();
  if (rank == 0)
    return n.error() << "operand must have rank >= 1";
  FailureOr<int64_t> normalized = n.normalizeAxis(*axis, rank);
  if (failed(normalized))
    return failure();
  // Before opset 13 the input is coerced to 2-D [prod(<axis), prod(>=axis)]
  // and normalized over the second dimension: one softmax over all the
  // trailing dimensions together.
  if (n.opset < 13 && *normalized != rank - 1) {
    auto type = cast<RankedTensorType>(operand->getType());
    int64_t rows = 1;
    for (int64_t d = 0; d < *normalized; ++d)
      rows *= type.getDimSize(d);
    Value flat = buildReshape(n.b, n.loc, *operand,
                              {rows, type.getNumElements() / std::max<int64_t>(rows, 1)});
    Value result = OpTy::create(n.b, n.loc, flat.getType(), flat, 1);
    return n.setResult(buildReshape(n.b, n.loc, result, type.getShape()));
  }
  return n.setResult(OpTy::create(n.b, n.loc, operand->getType(), *operand,
                                  *normalized));
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
  table["Softmax"] = importSoftmax<SoftmaxOp>;
  table["LogSoftmax"] = importSoftmax<LogSoftmaxOp>;
}

} // namespace lmc::onnx_import
