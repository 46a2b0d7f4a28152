//===- OnnxContractions.cpp - Gemm and MatMul -----------------------------===//

#include "OnnxImporter.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;

namespace lmc::onnx_import {
namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Y = alpha * op(A) @ op(B) + beta * C, with C broadcast to [M, N].
LogicalResult importGemm(NodeImporter &n) {
  if (failed(n.checkArity(2, 3)) ||
      failed(n.checkAttributes({"alpha", "beta", "transA", "transB"})))
    return failure();
  FailureOr<float> alpha = n.floatAttr("alpha", 1.0f);
  FailureOr<float> beta = n.floatAttr("beta", 1.0f);
  FailureOr<int64_t> transA = n.intAttr("transA", 0);
  FailureOr<int64_t> transB = n.intAttr("transB", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  FailureOr<Value> a = n.floatInput(0), b = n.floatInput(1);
  if (failed(a) || failed(b))
    return failure();
  RankedTensorType aType = typeOf(*a), bType = typeOf(*b);
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return n.error() << "A and B must be 2-D, got " << aType << " and "
                     << bType;
  if (aType.getElementType() != bType.getElementType())
    return n.error() << "operand element types differ: " << aType << " and "
                     << bType;
  int64_t m = aType.getDimSize(*transA ? 1 : 0);
  int64_t k = aType.getDimSize(*transA ? 0 : 1);
  int64_t kb = bType.getDimSize(*transB ? 1 : 0);
  int64_t nn = bType.getDimSize(*transB ? 0 : 1);
  if (k != kb)
    return n.error() << "inner dimensions differ: " << aType
                     << (*transA ? " (transposed)" : "") << " and " << bType
                     << (*transB ? " (transposed)" : "");
  auto resultType = RankedTensorType::get({m, nn}, aType.getElementType());
  Value y = MatmulOp::create(n.b, n.loc, resultType, *a, *b,
                             /*transpose_lhs=*/*transA != 0,
                             /*transpose_rhs=*/*transB != 0);
  if (*alpha != 1.0f)
    y = MulOp::create(n.b, n.loc, resultType, y,
                      buildSplat(n.b, n.loc, resultType, *alpha));

  if (n.hasInput(2) && *beta != 0.0f) {
    FailureOr<Value> c = n.floatInput(2);
    if (failed(c))
      return failure();
    RankedTensorType cType = typeOf(*c);
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(cType.getShape(), resultType.getShape());
    if (cType.getElementType() != resultType.getElementType() ||
        failed(shape) || ArrayRef<int64_t>(*shape) != resultType.getShape())
      return n.error() << "C " << cType
                       << " is not unidirectionally broadcastable to "
                       << resultType;
    Value cv = *c;
    if (*beta != 1.0f)
      cv = MulOp::create(n.b, n.loc, cType, cv,
                         buildSplat(n.b, n.loc, cType, *beta));
    cv = buildNumpyBroadcast(n.b, n.loc, cv, resultType.getShape());
    y = AddOp::create(n.b, n.loc, resultType, y, cv);
  }
  return n.setResult(y);
}

/// numpy.matmul: 1-D operands are promoted to matrices (and the extra
/// dimension dropped afterwards), batch dimensions broadcast.
LogicalResult importMatMul(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> lhsOr = n.floatInput(0), rhsOr = n.floatInput(1);
  if (failed(lhsOr) || failed(rhsOr))
    return failure();
  Value lhs = *lhsOr, rhs = *rhsOr;
  RankedTensorType lhsType = typeOf(lhs), rhsType = typeOf(rhs);
  if (lhsType.getRank() == 0 || rhsType.getRank() == 0)
    return n.error() << "operands must have rank >= 1, got " << lhsType
                     << " and " << rhsType;
  if (lhsType.getElementType() != rhsType.getElementType())
    return n.error() << "operand element types differ: " << lhsType << " and "
                     << rhsType;
  Type elementType = lhsType.getElementType();

  bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
  if (lhsVector)
    lhs = buildReshape(n.b, n.loc, lhs, {1, lhsType.getDimSize(0)});
  if (rhsVector)
    rhs = buildReshape(n.b, n.loc, rhs, {rhsType.getDimSize(0), 1});
  ArrayRef<int64_t> lShape = typeOf(lhs).getShape();
  ArrayRef<int64_t> rShape = typeOf(rhs).getShape();
  int64_t m = lShape[lShape.size() - 2], k = lShape.back();
  int64_t kr = rShape[rShape.size() - 2], nn = rShape.back();
  if (k != kr)
    return n.error() << "inner dimensions differ: " << lhsType << " and "
                     << rhsType;
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(lShape.drop_back(2), rShape.drop_back(2));
  if (failed(batch))
    return n.error() << "batch dimensions of " << lhsType << " and "
                     << rhsType << " are not broadcastable";

  SmallVector<int64_t> resultShape(*batch);
  resultShape.append({m, nn});
  Value result;
  if (rShape.size() == 2 && lShape.size() > 2) {
    // [..., M, K] x [K, N]: one 2-D product over the flattened rows, which
    // avoids materializing the broadcast weight.
    int64_t rows = m;
    for (int64_t dim : lShape.drop_back(2))
      rows *= dim;
    Value flat = buildReshape(n.b, n.loc, lhs, {rows, k});
    result = MatmulOp::create(
        n.b, n.loc, RankedTensorType::get({rows, nn}, elementType), flat, rhs,
        false, false);
    result = buildReshape(n.b, n.loc, result, resultShape);
  } else {
    SmallVector<int64_t> lFull(*batch), rFull(*batch);
    lFull.append({m, k});
    rFull.append({k, nn});
    lhs = buildNumpyBroadcast(n.b, n.loc, lhs, lFull);
    rhs = buildNumpyBroadcast(n.b, n.loc, rhs, rFull);
    result = MatmulOp::create(n.b, n.loc,
                              RankedTensorType::get(resultShape, elementType),
                              lhs, rhs, false, false);
  }

  // Drop the dimensions that promotion added.
  SmallVector<int64_t> finalShape(*batch);
  if (!lhsVector)
    finalShape.push_back(m);
  if (!rhsVector)
    finalShape.push_back(nn);
  return n.setResult(buildReshape(n.b, n.loc, result, finalShape));
}

} // namespace

void registerContractionOps(OpTable &table) {
  table["Gemm"] = importGemm;
  table["MatMul"] = importMatMul;
}

} // namespace lmc::onnx_import
