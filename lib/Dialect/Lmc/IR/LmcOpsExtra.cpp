//===- LmcOpsExtra.cpp - verifiers of the conversion, slicing and gather ops ===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace lmc;

LogicalResult ConvertOp::verify() {
  if (tensorType(getOperand()).getShape() != tensorType(getResult()).getShape())
    return emitOpError("expected the operand and result shapes to match");
  if (tensorType(getResult()).getElementType().isInteger(1))
    return emitOpError("expected a float or wider integer result element type");
  return success();
}

LogicalResult ConcatOp::verify() {
  RankedTensorType resultType = tensorType(getResult());
  int64_t rank = resultType.getRank();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError("expected axis in [0, ") << rank << ")";
  if (getInputs().empty())
    return emitOpError("expected at least one input");
  int64_t total = 0;
  for (Value input : getInputs()) {
    RankedTensorType type = tensorType(input);
    if (type.getRank() != rank ||
        type.getElementType() != resultType.getElementType())
      return emitOpError("expected inputs of the result's rank and element "
                         "type");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && type.getDimSize(d) != resultType.getDimSize(d))
        return emitOpError("expected input dimension ")
               << d << " to match the result";
    total += type.getDimSize(axis);
  }
  if (total != resultType.getDimSize(axis))
    return emitOpError("expected the inputs' sizes along the axis to sum to ")
           << resultType.getDimSize(axis) << ", got " << total;
  return success();
}

/// Checks that a strided window of `small` fits into `large`.
static LogicalResult verifyStridedWindow(Operation *op, RankedTensorType large,
                                         RankedTensorType small,
                                         ArrayRef<int64_t> start,
                                         ArrayRef<int64_t> stride) {
  int64_t rank = large.getRank();
  if (small.getRank() != rank ||
      static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(stride.size()) != rank)
    return op->emitOpError("expected start, stride and both tensors of the "
                           "same rank");
  if (small.getElementType() != large.getElementType())
    return op->emitOpError("expected matching element types");
  for (int64_t d = 0; d < rank; ++d) {
    if (stride[d] == 0)
      return op->emitOpError("expected non-zero strides");
    int64_t count = small.getDimSize(d);
    if (count == 0)
      continue;
    int64_t first = start[d], last = start[d] + (count - 1) * stride[d];
    if (first < 0 || first >= large.getDimSize(d) || last < 0 ||
        last >= large.getDimSize(d))
      return op->emitOpError("window along dimension ")
             << d << " (start " << first << ", stride " << stride[d] << ", "
             << count << " elements) exceeds size " << large.getDimSize(d);
  }
  return success();
}

LogicalResult SliceOp::verify() {
  return verifyStridedWindow(*this, tensorType(getOperand()),
                             tensorType(getResult()), getStart(), getStride());
}

LogicalResult SliceGradOp::verify() {
  return verifyStridedWindow(*this, tensorType(getResult()),
                             tensorType(getSource()), getStart(), getStride());
}

template <typename ReduceOp>
static LogicalResult verifyReduction(ReduceOp op) {
  RankedTensorType operandType = tensorType(op.getOperand());
  RankedTensorType resultType = tensorType(op.getResult());
  ArrayRef<int64_t> axes = op.getAxes();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= operandType.getRank())
      return op.emitOpError("expected axes in [0, operand rank)");
    if (i > 0 && axis <= axes[i - 1])
      return op.emitOpError("expected sorted, unique axes");
  }
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < operandType.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      expected.push_back(operandType.getDimSize(d));
    else if (op.getKeepDims())
      expected.push_back(1);
  }
  if (resultType.getShape() != ArrayRef<int64_t>(expected) ||
      resultType.getElementType() != operandType.getElementType())
    return op.emitOpError("expected result type ")
           << RankedTensorType::get(expected, operandType.getElementType());
  return success();
}

LogicalResult ReduceMaxOp::verify() { return verifyReduction(*this); }
LogicalResult ReduceMinOp::verify() { return verifyReduction(*this); }

LogicalResult CumSumOp::verify() {
  int64_t rank = tensorType(getOperand()).getRank();
  if (getAxis() < 0 || getAxis() >= rank)
    return emitOpError("expected axis in [0, ") << rank << ")";
  return success();
}

/// The shape `large` gathered along `axis` with `indices`.
static SmallVector<int64_t> gatheredShape(RankedTensorType large,
                                          RankedTensorType indices,
                                          int64_t axis) {
  SmallVector<int64_t> shape(large.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, large.getShape().drop_front(axis + 1));
  return shape;
}

static LogicalResult verifyGatherLike(Operation *op, RankedTensorType large,
                                      RankedTensorType indices,
                                      RankedTensorType small, int64_t axis,
                                      StringRef smallName) {
  if (axis < 0 || axis >= large.getRank())
    return op->emitOpError("expected axis in [0, ") << large.getRank() << ")";
  if (small.getElementType() != large.getElementType())
    return op->emitOpError("expected matching element types");
  SmallVector<int64_t> expected = gatheredShape(large, indices, axis);
  if (small.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("expected ")
           << smallName << " of type "
           << RankedTensorType::get(expected, large.getElementType());
  return success();
}

LogicalResult GatherOp::verify() {
  if (failed(verifyGatherLike(*this, tensorType(getOperand()),
                              tensorType(getIndices()),
                              tensorType(getResult()), getAxis(), "result")))
    return failure();
  int64_t size = tensorType(getOperand()).getDimSize(getAxis());
  if (std::optional<int64_t> padding = getPaddingIndex();
      padding && (*padding < 0 || *padding >= size))
    return emitOpError("expected padding_index in [0, ") << size << ")";
  return success();
}

LogicalResult ScatterAddOp::verify() {
  return verifyGatherLike(*this, tensorType(getResult()),
                          tensorType(getIndices()), tensorType(getUpdates()),
                          getAxis(), "updates");
}
