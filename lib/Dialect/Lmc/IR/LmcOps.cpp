//===- LmcOps.cpp - lmc op verifiers --------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace lmc;

#include "lmc/Dialect/Lmc/IR/LmcEnums.cpp.inc"

#define GET_OP_CLASSES
#include "lmc/Dialect/Lmc/IR/LmcOps.cpp.inc"

bool lmc::compareScalars(CmpPredicate predicate, double lhs, double rhs) {
  switch (predicate) {
  case CmpPredicate::eq:
    return lhs == rhs;
  case CmpPredicate::ne:
    return lhs != rhs;
  case CmpPredicate::lt:
    return lhs < rhs;
  case CmpPredicate::le:
    return lhs <= rhs;
  case CmpPredicate::gt:
    return lhs > rhs;
  case CmpPredicate::ge:
    return lhs >= rhs;
  }
  llvm_unreachable("unknown lmc.cmp predicate");
}

LogicalResult CmpOp::verify() {
  if (tensorType(getResult()).getShape() != tensorType(getLhs()).getShape())
    return emitOpError("expected the result to have the operands' shape");
  return success();
}

LogicalResult SelectOp::verify() {
  if (tensorType(getCondition()).getShape() != tensorType(getResult()).getShape())
    return emitOpError("expected the condition to have the result's shape");
  return success();
}

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType operandType = tensorType(getOperand());
  RankedTensorType resultType = tensorType(getResult());
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("expected operand and result element types to match");
  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != operandType.getRank())
    return emitOpError("expected one entry in dims per operand dimension");
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= resultType.getRank())
      return emitOpError("expected dims entries in [0, result rank)");
    if (i > 0 && dim <= dims[i - 1])
      return emitOpError("expected strictly increasing dims");
    int64_t size = operandType.getDimSize(i);
    if (size != 1 && size != resultType.getDimSize(dim))
      return emitOpError("operand dimension ")
             << i << " of size " << size
             << " cannot broadcast to result dimension " << dim << " of size "
             << resultType.getDimSize(dim);
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType operandType = tensorType(getOperand());
  RankedTensorType resultType = tensorType(getResult());
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("expected operand and result element types to match");
  if (!operandType.hasStaticShape() || !resultType.hasStaticShape())
    return emitOpError("expected static shapes");
  if (operandType.getNumElements() != resultType.getNumElements())
    return emitOpError("expected the same number of elements, got ")
           << operandType.getNumElements() << " and "
           << resultType.getNumElements();
  return success();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType operandType = tensorType(getOperand());
  RankedTensorType resultType = tensorType(getResult());
  ArrayRef<int64_t> perm = getPerm();
  if (static_cast<int64_t>(perm.size()) != operandType.getRank() ||
      resultType.getRank() != operandType.getRank())
    return emitOpError("expected perm, operand and result of the same rank");
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= operandType.getRank() || seen[p])
      return emitOpError("expected perm to be a permutation");
    seen[p] = true;
    if (resultType.getDimSize(i) != operandType.getDimSize(p))
      return emitOpError("expected result dimension ")
             << i << " to equal operand dimension " << p;
  }
  if (operandType.getElementType() != resultType.getElementType())
    return emitOpError("expected operand and result element types to match");
  return success();
}

LogicalResult ReduceSumOp::verify() {
  RankedTensorType operandType = tensorType(getOperand());
  RankedTensorType resultType = tensorType(getResult());
  ArrayRef<int64_t> axes = getAxes();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= operandType.getRank())
      return emitOpError("expected axes in [0, operand rank)");
    if (i > 0 && axis <= axes[i - 1])
      return emitOpError("expected sorted, unique axes");
  }
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < operandType.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      expected.push_back(operandType.getDimSize(d));
    else if (getKeepDims())
      expected.push_back(1);
  }
  if (resultType.getShape() != ArrayRef<int64_t>(expected) ||
      resultType.getElementType() != operandType.getElementType())
    return emitOpError("expected result type ")
           << RankedTensorType::get(expected, operandType.getElementType());
  return success();
}

LogicalResult lmc::verifyProductElementTypes(Operation *op) {
  auto elementOf = [](Type t) { return cast<ShapedType>(t).getElementType(); };
  Type element = elementOf(op->getOperand(0).getType());
  Type result = elementOf(op->getResult(0).getType());
  bool accumulatesInF32 = (element.isBF16() || element.isF16()) && result.isF32();
  if (elementOf(op->getOperand(1).getType()) != element ||
      (result != element && !accumulatesInF32))
    return op->emitOpError("expected matching element types, or bf16/f16 "
                           "operands with an f32 result");
  return success();
}

LogicalResult MatmulOp::verify() {
  RankedTensorType lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  RankedTensorType result = tensorType(getResult());
  int64_t rank = result.getRank();
  if (rank < 2 || lhs.getRank() != rank || rhs.getRank() != rank)
    return emitOpError("expected operands and result of the same rank >= 2");
  if (failed(verifyProductElementTypes(*this)))
    return failure();
  if (lhs.getShape().drop_back(2) != result.getShape().drop_back(2) ||
      rhs.getShape().drop_back(2) != result.getShape().drop_back(2))
    return emitOpError("expected operands to have the result's batch dimensions");
  int64_t m = lhs.getDimSize(rank - (getTransposeLhs() ? 1 : 2));
  int64_t k = lhs.getDimSize(rank - (getTransposeLhs() ? 2 : 1));
  int64_t rhsK = rhs.getDimSize(rank - (getTransposeRhs() ? 1 : 2));
  int64_t n = rhs.getDimSize(rank - (getTransposeRhs() ? 2 : 1));
  if (k != rhsK)
    return emitOpError("contraction dimensions differ: ") << k << " vs " << rhsK;
  if (result.getDimSize(rank - 2) != m || result.getDimSize(rank - 1) != n)
    return emitOpError("expected result matrix of ") << m << "x" << n;
  return success();
}

bool MatmulOp::allowsLowPrecisionInputs() { return true; }

template <typename SoftmaxLikeOp>
static LogicalResult verifySoftmaxLike(SoftmaxLikeOp op) {
  int64_t rank = tensorType(op.getOperand()).getRank();
  if (op.getAxis() < 0 || op.getAxis() >= rank)
    return op.emitOpError("expected axis in [0, ") << rank << ")";
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxLike(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxLike(*this); }

static LogicalResult verifyCrossEntropyOperands(Operation *op, Value logits,
                                                Value labels) {
  RankedTensorType logitsType = tensorType(logits);
  RankedTensorType labelsType = tensorType(labels);
  if (logitsType.getRank() != 2 || labelsType.getRank() != 1 ||
      logitsType.getDimSize(0) != labelsType.getDimSize(0))
    return op->emitOpError("expected logits [N, C] and labels [N]");
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::verify() {
  if (failed(verifyCrossEntropyOperands(*this, getLogits(), getLabels())))
    return failure();
  RankedTensorType resultType = tensorType(getResult());
  if (resultType.getRank() != 0 ||
      resultType.getElementType() != tensorType(getLogits()).getElementType())
    return emitOpError("expected a scalar result of the logits' element type");
  return success();
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  if (failed(verifyCrossEntropyOperands(*this, getLogits(), getLabels())))
    return failure();
  if (tensorType(getCotangent()) !=
      RankedTensorType::get({}, tensorType(getLogits()).getElementType()))
    return emitOpError("expected a scalar cotangent of the logits' element type");
  return success();
}
