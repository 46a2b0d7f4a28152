//===- Logical.cpp - comparisons, boolean logic, Where, Cast --------------===//
//
// Comparisons, IsNaN, IsInf and boolean ops produce i1 tensors (not
// differentiable). The comparisons, the boolean ops, Where and Cast fold
// when their inputs are compile-time constants (the shape arithmetic of
// exported models); otherwise they become lmc.cmp, lmc.not/and/or (Xor
// composed of them), lmc.select and lmc.convert with numpy broadcasting.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// The broadcast shape of all inputs, checking that their element types
/// agree from input `firstSameType` on.
FailureOr<SmallVector<int64_t>> broadcastInputs(NodeImporter &n,
                                                unsigned firstSameType = 0) {
  SmallVector<int64_t> shape;
  Type elementType;
  for (int i = 0; i < n.node.input_size(); ++i) {
    FailureOr<RankedTensorType> type = n.inputType(i);
    if (failed(type))
      return failure();
    if (i >= static_cast<int>(firstSameType)) {
      if (elementType && elementType != type->getElementType())
        return n.error() << "input element types differ: " << elementType
                         << " and " << type->getElementType();
      elementType = type->getElementType();
    }
    FailureOr<SmallVector<int64_t>> joined =
        broadcastShapes(shape, type->getShape());
    if (failed(joined))
      return n.error() << "inputs are not broadcastable";
    shape = *joined;
  }
  return shape;
}

/// When every input is a constant, folds `fn` over the broadcast elements.
/// Returns failure() after an error, true when folded, false otherwise.
FailureOr<bool> foldElementwise(NodeImporter &n, ArrayRef<int64_t> shape,
                                Type resultElement,
                                function_ref<double(ArrayRef<double>)> fn) {
  SmallVector<DenseElementsAttr> constants;
  for (int i = 0; i < n.node.input_size(); ++i) {
    DenseElementsAttr c = n.constantInput(i);
    if (!c)
      return false;
    constants.push_back(c);
  }
  auto resultType = RankedTensorType::get(shape, resultElement);
  if (resultType.getNumElements() > kMaxFoldedElements)
    return false;
  SmallVector<SmallVector<double>> values;
  for (DenseElementsAttr c : constants)
    values.push_back(doubleValues(c));
  SmallVector<double> result;
  SmallVector<double> args(constants.size());
  for (int64_t j = 0; j < resultType.getNumElements(); ++j) {
    for (auto [k, c] : llvm::enumerate(constants))
      args[k] = values[k][broadcastSource(
          j, shape, cast<RankedTensorType>(c.getType()).getShape())];
    result.push_back(fn(args));
  }
  if (failed(n.setConstantResult(constantFromDoubles(resultType, result))))
    return failure();
  return true;
}

Type i1(NodeImporter &n) { return n.b.getI1Type(); }

template <CmpPredicate predicate>
double compare(ArrayRef<double> a) {
  return compareScalars(predicate, a[0], a[1]);
}

template <CmpPredicate predicate>
LogicalResult importCompare(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = broadcastInputs(n);
  if (failed(shape))
    return failure();
  FailureOr<bool> folded = foldElementwise(n, *shape, i1(n), compare<predicate>);
  if (failed(folded) || *folded)
    return failure(failed(folded));
  FailureOr<Value> lhs = n.input(0), rhs = n.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (cast<RankedTensorType>(lhs->getType()).getElementType().isInteger(1))
    return n.error() << "comparing boolean tensors is only supported on "
                        "compile-time constants";
  Value l = buildNumpyBroadcast(n.b, n.loc, *lhs, *shape);
  Value r = buildNumpyBroadcast(n.b, n.loc, *rhs, *shape);
  auto resultType = RankedTensorType::get(*shape, i1(n));
  return n.setResult(
      CmpOp::create(n.b, n.loc, resultType, predicate, l, r));
}

/// IsNaN: x != x (lmc.cmp's `ne` is unordered, as IEEE !=).
LogicalResult importIsNaN(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> x = n.floatInput(0);
  if (failed(x))
    return failure();
  return n.setResult(buildCompare(n.b, n.loc, CmpPredicate::ne, *x, *x));
}

/// IsInf: x == +inf (detect_positive) or x == -inf (detect_negative).
LogicalResult importIsInf(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) ||
      failed(n.checkAttributes({"detect_positive", "detect_negative"})))
    return failure();
  FailureOr<int64_t> positive = n.intAttr("detect_positive", 1);
  FailureOr<int64_t> negative = n.intAttr("detect_negative", 1);
  FailureOr<Value> x = n.floatInput(0);
  if (failed(positive) || failed(negative) || failed(x))
    return failure();
  const double inf = std::numeric_limits<double>::infinity();
  auto equals = [&](double v) {
    return buildCompare(n.b, n.loc, CmpPredicate::eq, *x, buildSplatLike(n.b, n.loc, *x, v));
  };
  // Neither: a comparison with NaN, false everywhere.
  Value result = equals(std::numeric_limits<double>::quiet_NaN());
  if (*positive && *negative)
    result = OrOp::create(n.b, n.loc, equals(inf), equals(-inf));
  else if (*positive || *negative)
    result = equals(*positive ? inf : -inf);
  return n.setResult(result);
}

/// A boolean input as a value of the broadcast shape.
FailureOr<Value> boolInput(NodeImporter &n, unsigned i,
                           ArrayRef<int64_t> shape) {
  FailureOr<Value> value = n.input(i);
  if (failed(value))
    return failure();
  auto type = cast<RankedTensorType>(value->getType());
  if (!type.getElementType().isInteger(1))
    return n.error() << "input " << i << " must be a bool tensor, got "
                     << type;
  return buildNumpyBroadcast(n.b, n.loc, *value, shape);
}

LogicalResult importNot(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  FailureOr<bool> folded = foldElementwise(
      n, type->getShape(), i1(n),
      [](ArrayRef<double> a) -> double { return a[0] == 0; });
  if (failed(folded) || *folded)
    return failure(failed(folded));
  FailureOr<Value> operand = boolInput(n, 0, type->getShape());
  if (failed(operand))
    return failure();
  return n.setResult(NotOp::create(n.b, n.loc, *operand));
}

enum class Logical { And, Or, Xor };

/// And, Or, Xor (as `(l || r) && !(l && r)`) of two bool tensors.
template <Logical kind> LogicalResult importLogical(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = broadcastInputs(n);
  if (failed(shape))
    return failure();
  FailureOr<bool> folded = foldElementwise(
      n, *shape, i1(n), [](ArrayRef<double> a) -> double {
        bool l = a[0] != 0, r = a[1] != 0;
        return kind == Logical::And  ? (l && r)
               : kind == Logical::Or ? (l || r)
                                     : (l != r);
      });
  if (failed(folded) || *folded)
    return failure(failed(folded));
  FailureOr<Value> lhs = boolInput(n, 0, *shape);
  if (failed(lhs))
    return failure();
  FailureOr<Value> rhs = boolInput(n, 1, *shape);
  if (failed(rhs))
    return failure();
  if (kind == Logical::And)
    return n.setResult(AndOp::create(n.b, n.loc, *lhs, *rhs));
  Value either = OrOp::create(n.b, n.loc, *lhs, *rhs);
  if (kind == Logical::Or)
    return n.setResult(either);
  Value both = AndOp::create(n.b, n.loc, *lhs, *rhs);
  return n.setResult(
      AndOp::create(n.b, n.loc, either, NotOp::create(n.b, n.loc, both)));
}

LogicalResult importWhere(NodeImporter &n) {
  if (failed(n.checkArity(3, 3)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<RankedTensorType> condType = n.inputType(0);
  if (failed(condType))
    return failure();
  if (!condType->getElementType().isInteger(1))
    return n.error() << "the condition must be a bool tensor, got "
                     << *condType;
  FailureOr<SmallVector<int64_t>> shape = broadcastInputs(n, 1);
  if (failed(shape))
    return failure();
  FailureOr<RankedTensorType> xType = n.inputType(1);
  if (failed(xType))
    return failure();
  FailureOr<bool> folded = foldElementwise(
      n, *shape, xType->getElementType(),
      [](ArrayRef<double> a) { return a[0] != 0 ? a[1] : a[2]; });
  if (failed(folded) || *folded)
    return failure(failed(folded));
  FailureOr<Value> cond = boolInput(n, 0, *shape);
  if (failed(cond))
    return failure();
  FailureOr<Value> x = n.input(1);
  if (failed(x))
    return failure();
  FailureOr<Value> y = n.input(2);
  if (failed(y))
    return failure();
  Value onTrue = buildNumpyBroadcast(n.b, n.loc, *x, *shape);
  Value onFalse = buildNumpyBroadcast(n.b, n.loc, *y, *shape);
  return n.setResult(
      SelectOp::create(n.b, n.loc, onTrue.getType(), *cond, onTrue, onFalse));
}

/// Cast: folded on constants; on values an lmc.convert (a comparison with
/// zero for a bool target, nothing for the same type).
/// Input 0 converted to `target` (folded for constants).
LogicalResult castInput(NodeImporter &n, Type target) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  auto resultType = RankedTensorType::get(type->getShape(), target);
  if (DenseElementsAttr constant = n.constantInput(0)) {
    if (type->getElementType() == target)
      return n.setConstantResult(constant);
    if (constant.isSplat() || type->getNumElements() <= kMaxFoldedElements) {
      SmallVector<double> values = doubleValues(constant);
      if (isa<IntegerType>(target) && !target.isInteger(1))
        for (double &v : values)
          v = std::trunc(v);
      return n.setConstantResult(constantFromDoubles(resultType, values));
    }
  }
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  if (type->getElementType() == target)
    return n.setResult(*operand);
  if (target.isInteger(1)) {
    if (!isa<FloatType>(type->getElementType()))
      return n.error() << "casting " << *type << " to bool is only supported "
                       << "on floats and compile-time constants";
    Value zero = buildSplatLike(n.b, n.loc, *operand, 0.0);
    return n.setResult(CmpOp::create(n.b, n.loc, resultType, CmpPredicate::ne, *operand,
                                     zero));
  }
  return n.setResult(ConvertOp::create(n.b, n.loc, resultType, *operand));
}

LogicalResult importCast(NodeImporter &n) {
  SmallVector<StringRef> allowed = {"to"};
  if (n.opset >= 19)
    allowed.push_back("saturate");
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes(allowed)))
    return failure();
  const onnx::AttributeProto *to = n.attr("to");
  if (!to)
    return n.error() << "missing attribute 'to'";
  if (to->type() != onnx::AttributeProto::INT)
    return n.error() << "attribute 'to' must be an int";
  Type target = convertElementType(n.b.getContext(), to->i());
  if (!target)
    return n.error() << "unsupported target type "
                     << dataTypeName(static_cast<int32_t>(to->i()));
  return castInput(n, target);
}

/// CastLike: Cast to the element type of input 1.
LogicalResult importCastLike(NodeImporter &n) {
  SmallVector<StringRef> allowed;
  if (n.opset >= 19)
    allowed.push_back("saturate");
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<RankedTensorType> like = n.inputType(1);
  if (failed(like))
    return failure();
  return castInput(n, like->getElementType());
}

} // namespace

void registerLogicalOps(OpTable &table) {
  table["Equal"] = importCompare<CmpPredicate::eq>;
  table["Less"] = importCompare<CmpPredicate::lt>;
  table["LessOrEqual"] = importCompare<CmpPredicate::le>;
  table["Greater"] = importCompare<CmpPredicate::gt>;
  table["GreaterOrEqual"] = importCompare<CmpPredicate::ge>;
  table["Not"] = importNot;
  table["And"] = importLogical<Logical::And>;
  table["Or"] = importLogical<Logical::Or>;
  table["Xor"] = importLogical<Logical::Xor>;
  table["IsNaN"] = importIsNaN;
  table["IsInf"] = importIsInf;
  table["Where"] = importWhere;
  table["Cast"] = importCast;
  table["CastLike"] = importCastLike;
}

} // namespace lmc::onnx_import
