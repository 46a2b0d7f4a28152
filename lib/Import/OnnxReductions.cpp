//===- OnnxReductions.cpp - ReduceSum/Mean/Max/Min, Softmax, LogSoftmax ---===//

#include "OnnxImporter.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

enum class Reduction { Sum, Mean, Max, Min };

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin: axes come from input 1 when
/// `axesAsInput`, else from the `axes` attribute.
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
  if (count == 0 && (kind == Reduction::Max || kind == Reduction::Min))
    return n.error() << "reducing an empty dimension";
  Value result;
  if (kind == Reduction::Max)
    result = ReduceMaxOp::create(n.b, n.loc, resultType, *operand, *normalized,
                                 *keepDims != 0);
  else if (kind == Reduction::Min)
    result = ReduceMinOp::create(n.b, n.loc, resultType, *operand, *normalized,
                                 *keepDims != 0);
  else
    result = ReduceSumOp::create(n.b, n.loc, resultType, *operand,
                                 *normalized, *keepDims != 0);
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

LogicalResult importReduceMean(NodeImporter &n) {
  return importReduce(n, Reduction::Mean, /*axesAsInput=*/n.opset >= 18);
}

LogicalResult importReduceMax(NodeImporter &n) {
  return importReduce(n, Reduction::Max, /*axesAsInput=*/n.opset >= 18);
}

LogicalResult importReduceMin(NodeImporter &n) {
  return importReduce(n, Reduction::Min, /*axesAsInput=*/n.opset >= 18);
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
  table["ReduceMean"] = importReduceMean;
  table["ReduceMax"] = importReduceMax;
  table["ReduceMin"] = importReduceMin;
  table["Softmax"] = importSoftmax<SoftmaxOp>;
  table["LogSoftmax"] = importSoftmax<LogSoftmaxOp>;
}

} // namespace lmc::onnx_import
