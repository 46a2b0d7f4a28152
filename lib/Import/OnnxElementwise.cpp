//===- OnnxElementwise.cpp - unary and broadcasting binary ONNX ops -------===//
//
// Add, Sub, Mul, Div (numpy broadcasting), Pow (constant exponent), and the
// unary float ops. Integer operands are shape arithmetic: they are folded
// when both are compile-time constants and rejected otherwise.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

enum class IntBinary { Add, Sub, Mul, Div };

/// Shape arithmetic is small; a larger folded result means a malformed model.
constexpr int64_t kMaxFoldedElements = 1 << 20;

/// The index into a tensor of `inShape` that numpy broadcasting reads for the
/// row-major `linear` index of a tensor of `outShape`.
int64_t broadcastSource(int64_t linear, ArrayRef<int64_t> outShape,
                        ArrayRef<int64_t> inShape) {
  int64_t offset = outShape.size() - inShape.size();
  int64_t source = 0, stride = 1;
  for (int64_t d = outShape.size() - 1; d >= 0; --d) {
    int64_t coord = linear % outShape[d];
    linear /= outShape[d];
    if (d < offset)
      continue;
    int64_t inDim = inShape[d - offset];
    if (inDim != 1)
      source += coord * stride;
    stride *= inDim;
  }
  return source;
}

LogicalResult foldIntBinary(NodeImporter &n, IntBinary kind,
                            ArrayRef<int64_t> shape) {
  DenseElementsAttr lhs = n.constantInput(0), rhs = n.constantInput(1);
  if (!lhs || !rhs)
    return n.error() << "integer arithmetic is only supported on compile-time "
                        "constants";
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> l = intValues(lhs), r = intValues(rhs);
  auto resultType = RankedTensorType::get(shape, lhsType.getElementType());
  int64_t count = resultType.getNumElements();
  if (count > kMaxFoldedElements)
    return n.error() << "integer result of " << count
                     << " elements is too large to fold";
  unsigned width = lhsType.getElementType().getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (int64_t i = 0; i < count; ++i) {
    int64_t a = l[broadcastSource(i, shape, lhsType.getShape())];
    int64_t c = r[broadcastSource(i, shape, rhsType.getShape())];
    int64_t v = 0;
    bool overflow = false;
    switch (kind) {
    case IntBinary::Add:
      overflow = llvm::AddOverflow(a, c, v);
      break;
    case IntBinary::Sub:
      overflow = llvm::SubOverflow(a, c, v);
      break;
    case IntBinary::Mul:
      overflow = llvm::MulOverflow(a, c, v);
      break;
    case IntBinary::Div:
      if (c == 0)
        return n.error() << "integer division by zero";
      overflow = a == std::numeric_limits<int64_t>::min() && c == -1;
      v = overflow ? 0 : a / c;
      break;
    }
    if (overflow)
      return n.error() << "integer overflow while folding";
    values.push_back(APInt(width, v, /*isSigned=*/true, /*implicitTrunc=*/true));
  }
  return n.setConstantResult(DenseElementsAttr::get(resultType, values));
}

/// Checks two operands' element types and broadcasts their shapes.
FailureOr<SmallVector<int64_t>> broadcastOperands(NodeImporter &n,
                                                  RankedTensorType lhs,
                                                  RankedTensorType rhs) {
  if (lhs.getElementType() != rhs.getElementType())
    return n.error() << "operand element types differ: " << lhs << " and "
                     << rhs;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return n.error() << "operands " << lhs << " and " << rhs
                     << " are not broadcastable";
  return shape;
}

template <typename OpTy, IntBinary kind>
LogicalResult importBinary(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<RankedTensorType> lhsType = n.inputType(0);
  FailureOr<RankedTensorType> rhsType = n.inputType(1);
  if (failed(lhsType) || failed(rhsType))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(n, *lhsType, *rhsType);
  if (failed(shape))
    return failure();
  if (isa<IntegerType>(lhsType->getElementType()))
    return foldIntBinary(n, kind, *shape);

  FailureOr<Value> lhs = n.floatInput(0), rhs = n.floatInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  Value l = buildNumpyBroadcast(n.b, n.loc, *lhs, *shape);
  Value r = buildNumpyBroadcast(n.b, n.loc, *rhs, *shape);
  return n.setResult(OpTy::create(n.b, n.loc, l.getType(), l, r));
}

LogicalResult importPow(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> base = n.floatInput(0);
  if (failed(base))
    return failure();
  // An exponent stored as a float initializer (exporters that fold constants
  // do that) is read from its initial value: it is not trained.
  DenseElementsAttr exponent = n.constantInput(1);
  if (!exponent)
    exponent = n.paramInitInput(1);
  if (!exponent)
    return n.error() << "the exponent (input 1, '" << n.node.input(1)
                     << "') must be a compile-time constant";
  auto baseType = cast<RankedTensorType>(base->getType());
  auto expType = cast<RankedTensorType>(exponent.getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(baseType.getShape(), expType.getShape());
  if (failed(shape))
    return n.error() << "operands " << baseType << " and " << expType
                     << " are not broadcastable";

  // The exponent in the base's element type.
  SmallVector<double> values;
  if (isa<IntegerType>(exponent.getElementType())) {
    for (int64_t v : intValues(exponent))
      values.push_back(static_cast<double>(v));
  } else {
    for (APFloat v : exponent.getValues<APFloat>()) {
      bool lost = false;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v.convertToDouble());
    }
  }
  Type elementType = baseType.getElementType();
  auto resultType = RankedTensorType::get(*shape, elementType);
  Value expValue;
  if (!values.empty() && (exponent.isSplat() || values.size() == 1)) {
    expValue = buildSplat(n.b, n.loc, resultType, values.front());
  } else {
    auto constType = RankedTensorType::get(expType.getShape(), elementType);
    SmallVector<APFloat> converted;
    for (double v : values) {
      APFloat f(v);
      bool lost = false;
      f.convert(cast<FloatType>(elementType).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      converted.push_back(f);
    }
    Value c = arith::ConstantOp::create(
        n.b, n.loc, constType, DenseElementsAttr::get(constType, converted));
    expValue = buildNumpyBroadcast(n.b, n.loc, c, *shape);
  }
  Value b = buildNumpyBroadcast(n.b, n.loc, *base, *shape);
  return n.setResult(PowOp::create(n.b, n.loc, resultType, b, expValue));
}

template <typename OpTy>
LogicalResult importUnary(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(operand))
    return failure();
  return n.setResult(OpTy::create(n.b, n.loc, operand->getType(), *operand));
}

/// Neg also negates integer constants (shape arithmetic).
LogicalResult importNeg(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  DenseElementsAttr constant = n.constantInput(0);
  if (constant && isa<IntegerType>(constant.getElementType())) {
    SmallVector<APInt> values;
    for (APInt v : constant.getValues<APInt>()) {
      if (v.isMinSignedValue())
        return n.error() << "integer overflow while folding";
      values.push_back(-v);
    }
    return n.setConstantResult(
        DenseElementsAttr::get(cast<ShapedType>(constant.getType()), values));
  }
  return importUnary<NegOp>(n);
}

} // namespace

void registerElementwiseOps(OpTable &table) {
  table["Add"] = importBinary<AddOp, IntBinary::Add>;
  table["Sub"] = importBinary<SubOp, IntBinary::Sub>;
  table["Mul"] = importBinary<MulOp, IntBinary::Mul>;
  table["Div"] = importBinary<DivOp, IntBinary::Div>;
  table["Pow"] = importPow;
  table["Neg"] = importNeg;
  table["Relu"] = importUnary<ReluOp>;
  table["Sigmoid"] = importUnary<SigmoidOp>;
  table["Tanh"] = importUnary<TanhOp>;
  table["Exp"] = importUnary<ExpOp>;
  table["Log"] = importUnary<LogOp>;
  table["Sqrt"] = importUnary<SqrtOp>;
}

} // namespace lmc::onnx_import
