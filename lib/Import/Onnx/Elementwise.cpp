//===- Elementwise.cpp - unary and broadcasting binary ONNX ops -----------===//
//
// Add, Sub, Mul, Div, Max, Min, Sum, Mean (numpy broadcasting), Pow
// (constant exponent), Clip, Gelu (decomposed into erf/tanh), Reciprocal
// and the unary float ops. Integer operands are folded when they are
// compile-time constants (shape arithmetic); otherwise Add, Sub, Mul, Div,
// Mod, Max, Min, Neg and Abs compute on int32/int64 at run time (index
// arithmetic, no gradient).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// Integer Div truncates (C); Mod takes the divisor's sign (Python's %),
/// FMod the dividend's (C's %), as ONNX Mod with fmod = 0 / 1.
enum class IntBinary { Add, Sub, Mul, Div, Mod, FMod };

LogicalResult foldIntBinary(NodeImporter &n, IntBinary kind,
                            ArrayRef<int64_t> shape) {
  DenseElementsAttr lhs = n.constantInput(0), rhs = n.constantInput(1);
  assert(lhs && rhs && "folds constants only");
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
    case IntBinary::Mod:
    case IntBinary::FMod:
      if (c == 0)
        return n.error() << "integer modulo by zero";
      v = (a == std::numeric_limits<int64_t>::min() && c == -1) ? 0 : a % c;
      if (kind == IntBinary::Mod && v != 0 && ((v < 0) != (c < 0)))
        v += c;
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
  // Integer arithmetic on constants is folded (shape arithmetic); otherwise
  // it is computed at run time (position ids from a mask; Div truncating,
  // a zero divisor ending the run).
  bool integer = isa<IntegerType>(lhsType->getElementType());
  if (integer && n.constantInput(0) && n.constantInput(1))
    return foldIntBinary(n, kind, *shape);

  FailureOr<Value> lhs = n.numericInput(0), rhs = n.numericInput(1);
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
  DenseElementsAttr exponent = n.fixedInput(1);
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

/// The float operand of a unary op without attributes.
FailureOr<Value> unaryOperand(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  return n.floatInput(0);
}

template <typename OpTy>
LogicalResult importUnary(NodeImporter &n) {
  FailureOr<Value> operand = unaryOperand(n);
  if (failed(operand))
    return failure();
  return n.setResult(OpTy::create(n.b, n.loc, operand->getType(), *operand));
}

/// Whether `value` is the f32 scalar `expected`, spread (a rank-0 constant,
/// possibly broadcast, or a splat).
bool isF32Scalar(Value value, float expected) {
  if (auto broadcast = value.getDefiningOp<BroadcastInDimOp>())
    value = broadcast.getOperand();
  DenseElementsAttr constant;
  return matchPattern(value, m_Constant(&constant)) && constant.isSplat() &&
         constant.getElementType().isF32() &&
         constant.getSplatValue<APFloat>().convertToFloat() == expected;
}

/// Erf. erf(x / sqrt 2), the normal CDF inside an exact GELU as PyTorch's
/// exporters write F.gelu, is computed as PyTorch computes it (eager and
/// Inductor): erf(x * (1 / sqrt 2)). Its argument may differ from the
/// division's in the last bit; the two divisions it saves (forward and
/// gradient) were most of the GELU gradient's time (measured 2026-12-06). The
/// Div stays for any other reader.
LogicalResult importErf(NodeImporter &n) {
  FailureOr<Value> operand = unaryOperand(n);
  if (failed(operand))
    return failure();
  Value x = *operand;
  if (auto div = x.getDefiningOp<DivOp>();
      div && isF32Scalar(div.getRhs(), float(M_SQRT2)))
    x = MulOp::create(n.b, n.loc, div.getLhs(),
                      buildSplatLike(n.b, n.loc, div.getLhs(), M_SQRT1_2));
  return n.setResult(ErfOp::create(n.b, n.loc, x.getType(), x));
}

/// Neg and Abs also take integers: folded on constants (shape arithmetic;
/// the minimum value has no negation), computed otherwise (a sliding
/// window's |i - j|).
template <typename OpTy, bool isAbs>
LogicalResult importSignedUnary(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  DenseElementsAttr constant = n.constantInput(0);
  if (constant && isa<IntegerType>(constant.getElementType())) {
    SmallVector<APInt> values;
    for (APInt v : constant.getValues<APInt>()) {
      if (v.isMinSignedValue())
        return n.error() << "integer overflow while folding";
      values.push_back(isAbs ? v.abs() : -v);
    }
    return n.setConstantResult(
        DenseElementsAttr::get(cast<ShapedType>(constant.getType()), values));
  }
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  if (!isa<IntegerType>(type->getElementType()))
    return importUnary<OpTy>(n);
  FailureOr<Value> operand = n.numericInput(0);
  if (failed(operand))
    return failure();
  return n.setResult(OpTy::create(n.b, n.loc, *type, *operand));
}

LogicalResult importReciprocal(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(operand))
    return failure();
  Value one = buildSplatLike(n.b, n.loc, *operand, 1.0);
  return n.setResult(DivOp::create(n.b, n.loc, one, *operand));
}

/// Gelu (opset 20): decomposed into lmc ops, so its VJP comes from theirs.
///   none: 0.5 x (1 + erf(x / sqrt 2))
///   tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
LogicalResult importGelu(NodeImporter &n) {
  if (n.opset < 20)
    return n.error() << "Gelu is an opset 20 op";
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"approximate"})))
    return failure();
  FailureOr<std::string> approximate = n.stringAttr("approximate", "none");
  if (failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return n.error() << "attribute 'approximate' must be 'none' or 'tanh', got '"
                     << *approximate << "'";
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(operand))
    return failure();
  OpBuilder &b = n.b;
  Location loc = n.loc;
  Value x = *operand;
  auto splat = [&](double v) { return buildSplatLike(b, loc, x, v); };
  Value inner;
  if (*approximate == "none") {
    inner = ErfOp::create(b, loc, MulOp::create(b, loc, x, splat(M_SQRT1_2)));
  } else {
    Value cube = MulOp::create(b, loc, x, MulOp::create(b, loc, x, x));
    Value poly = AddOp::create(b, loc, x,
                               MulOp::create(b, loc, splat(0.044715), cube));
    inner = TanhOp::create(
        b, loc, MulOp::create(b, loc, splat(std::sqrt(2.0 / M_PI)), poly));
  }
  Value onePlus = AddOp::create(b, loc, splat(1.0), inner);
  Value half = MulOp::create(b, loc, splat(0.5), x);
  return n.setResult(MulOp::create(b, loc, half, onePlus));
}

/// Max / Min of one or more inputs with numpy broadcasting; folded when all
/// inputs are constants (shape arithmetic).
template <typename OpTy, bool isMax>
LogicalResult importExtremum(NodeImporter &n) {
  if (failed(n.checkArity(1, std::numeric_limits<unsigned>::max())) ||
      failed(n.checkAttributes({})))
    return failure();
  unsigned count = n.node.input_size();
  SmallVector<int64_t> shape;
  Type elementType;
  bool allConstant = true;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<RankedTensorType> type = n.inputType(i);
    if (failed(type))
      return failure();
    if (elementType && elementType != type->getElementType())
      return n.error() << "input element types differ";
    elementType = type->getElementType();
    FailureOr<SmallVector<int64_t>> joined =
        broadcastShapes(shape, type->getShape());
    if (failed(joined))
      return n.error() << "inputs are not broadcastable";
    shape = *joined;
    allConstant &= static_cast<bool>(n.constantInput(i));
  }
  auto resultType = RankedTensorType::get(shape, elementType);
  if (allConstant && resultType.getNumElements() <= kMaxFoldedElements) {
    SmallVector<double> result;
    for (unsigned i = 0; i < count; ++i) {
      DenseElementsAttr c = n.constantInput(i);
      SmallVector<double> values = doubleValues(c);
      ArrayRef<int64_t> inShape = cast<RankedTensorType>(c.getType()).getShape();
      for (int64_t j = 0; j < resultType.getNumElements(); ++j) {
        double v = values[broadcastSource(j, shape, inShape)];
        if (i == 0)
          result.push_back(v);
        else
          result[j] = isMax ? std::max(result[j], v) : std::min(result[j], v);
      }
    }
    return n.setConstantResult(constantFromDoubles(resultType, result));
  }
  Value result;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<Value> operand = n.numericInput(i);
    if (failed(operand))
      return failure();
    Value v = buildNumpyBroadcast(n.b, n.loc, *operand, shape);
    result = result ? OpTy::create(n.b, n.loc, resultType, result, v).getResult()
                    : v;
  }
  return n.setResult(result);
}

/// Sum / Mean of one or more float inputs with numpy broadcasting.
template <bool mean> LogicalResult importSum(NodeImporter &n) {
  if (failed(n.checkArity(1, std::numeric_limits<unsigned>::max())) ||
      failed(n.checkAttributes({})))
    return failure();
  unsigned count = n.node.input_size();
  SmallVector<Value> operands;
  SmallVector<int64_t> shape;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<Value> operand = n.floatInput(i);
    if (failed(operand))
      return failure();
    auto type = cast<RankedTensorType>(operand->getType());
    if (!operands.empty() &&
        type.getElementType() !=
            cast<RankedTensorType>(operands[0].getType()).getElementType())
      return n.error() << "input element types differ";
    FailureOr<SmallVector<int64_t>> joined =
        broadcastShapes(shape, type.getShape());
    if (failed(joined))
      return n.error() << "inputs are not broadcastable";
    shape = *joined;
    operands.push_back(*operand);
  }
  Value result = buildNumpyBroadcast(n.b, n.loc, operands[0], shape);
  for (Value operand : ArrayRef<Value>(operands).drop_front())
    result = AddOp::create(n.b, n.loc, result,
                           buildNumpyBroadcast(n.b, n.loc, operand, shape));
  if (mean)
    result = MulOp::create(n.b, n.loc, result,
                           buildSplatLike(n.b, n.loc, result, 1.0 / count));
  return n.setResult(result);
}

/// Mod of floats (fmod = 1, as the spec requires for them): C's fmod,
/// x - y trunc(x / y), the sign of the dividend.
/// Mod of integers computed at run time: x - y * trunc(x / y) (C's `%`,
/// fmod = 1), moved to the divisor's sign where it differs (Python's `%`,
/// fmod = 0); lmc.div's zero divisor ends the run.
LogicalResult buildIntegerMod(NodeImporter &n, ArrayRef<int64_t> shape,
                              bool fmod) {
  FailureOr<Value> lhs = n.numericInput(0), rhs = n.numericInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  OpBuilder &b = n.b;
  Location loc = n.loc;
  Value x = buildNumpyBroadcast(b, loc, *lhs, shape);
  Value y = buildNumpyBroadcast(b, loc, *rhs, shape);
  Value r = SubOp::create(b, loc, x,
                          MulOp::create(b, loc, y, DivOp::create(b, loc, x, y)));
  if (fmod)
    return n.setResult(r);
  Value zero = buildSplatLike(b, loc, r, 0.0);
  auto is = [&](CmpPredicate predicate, Value v) {
    return buildCompare(b, loc, predicate, v, zero);
  };
  // One statement each: the IR's order does not depend on the compiler's
  // order of evaluating arguments.
  Value rNegative = is(CmpPredicate::lt, r), yPositive = is(CmpPredicate::gt, y);
  Value negativeAgainstPositive = AndOp::create(b, loc, rNegative, yPositive);
  Value rPositive = is(CmpPredicate::gt, r), yNegative = is(CmpPredicate::lt, y);
  Value positiveAgainstNegative = AndOp::create(b, loc, rPositive, yNegative);
  Value signsDiffer = OrOp::create(b, loc, negativeAgainstPositive,
                                   positiveAgainstNegative);
  return n.setResult(
      buildSelect(b, loc, signsDiffer, AddOp::create(b, loc, r, y), r));
}

LogicalResult importMod(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({"fmod"})))
    return failure();
  FailureOr<int64_t> fmod = n.intAttr("fmod", 0);
  FailureOr<RankedTensorType> lhsType = n.inputType(0);
  FailureOr<RankedTensorType> rhsType = n.inputType(1);
  if (failed(fmod) || failed(lhsType) || failed(rhsType))
    return failure();
  if (!isa<FloatType>(lhsType->getElementType())) {
    FailureOr<SmallVector<int64_t>> shape =
        broadcastOperands(n, *lhsType, *rhsType);
    if (failed(shape))
      return failure();
    if (n.constantInput(0) && n.constantInput(1))
      return foldIntBinary(n, *fmod ? IntBinary::FMod : IntBinary::Mod,
                           *shape);
    return buildIntegerMod(n, *shape, *fmod != 0);
  }
  if (*fmod != 1)
    return n.error() << "Mod of floats needs fmod = 1";
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(n, *lhsType, *rhsType);
  FailureOr<Value> lhs = n.floatInput(0), rhs = n.floatInput(1);
  if (failed(shape) || failed(lhs) || failed(rhs))
    return failure();
  OpBuilder &b = n.b;
  Location loc = n.loc;
  Value x = buildNumpyBroadcast(b, loc, *lhs, *shape);
  Value y = buildNumpyBroadcast(b, loc, *rhs, *shape);
  Value q = DivOp::create(b, loc, x, y);
  Value truncated = buildSelect(
      b, loc, buildCompare(b, loc, CmpPredicate::lt, q, buildSplatLike(b, loc, q, 0.0)),
      CeilOp::create(b, loc, q), FloorOp::create(b, loc, q));
  return n.setResult(
      SubOp::create(b, loc, x, MulOp::create(b, loc, y, truncated)));
}

/// A Clip bound: an attribute (opset < 11) or an optional input, read from
/// its constant or initial value when it has one (a bound is not trained).
FailureOr<Value> clipBound(NodeImporter &n, unsigned input, StringRef attrName,
                           Value x) {
  if (n.opset < 11) {
    if (!n.attr(attrName))
      return Value();
    FailureOr<float> value = n.floatAttr(attrName, 0.0f);
    if (failed(value))
      return failure();
    return buildSplatLike(n.b, n.loc, x, *value);
  }
  if (!n.hasInput(input))
    return Value();
  DenseElementsAttr constant = n.fixedInput(input);
  auto xType = cast<RankedTensorType>(x.getType());
  if (constant) {
    if (constant.getNumElements() != 1)
      return n.error() << "input " << input << " must be a scalar";
    return buildSplatLike(n.b, n.loc, x, doubleValues(constant).front());
  }
  FailureOr<Value> bound = n.floatInput(input);
  if (failed(bound))
    return failure();
  if (cast<RankedTensorType>(bound->getType()).getNumElements() != 1)
    return n.error() << "input " << input << " must be a scalar";
  Value scalar = buildReshape(n.b, n.loc, *bound, {});
  return buildNumpyBroadcast(n.b, n.loc, scalar, xType.getShape());
}

LogicalResult importClip(NodeImporter &n) {
  bool asInputs = n.opset >= 11;
  if (failed(n.checkArity(1, asInputs ? 3 : 1)) ||
      failed(n.checkAttributes(asInputs ? ArrayRef<StringRef>()
                                        : ArrayRef<StringRef>{"min", "max"})))
    return failure();
  FailureOr<Value> x = n.floatInput(0);
  if (failed(x))
    return failure();
  FailureOr<Value> lo = clipBound(n, 1, "min", *x);
  if (failed(lo))
    return failure();
  FailureOr<Value> hi = clipBound(n, 2, "max", *x);
  if (failed(hi))
    return failure();
  Value result = *x;
  if (*lo)
    result = MaxOp::create(n.b, n.loc, result.getType(), result, *lo);
  if (*hi)
    result = MinOp::create(n.b, n.loc, result.getType(), result, *hi);
  return n.setResult(result);
}

} // namespace

void registerElementwiseOps(OpTable &table) {
  table["Add"] = importBinary<AddOp, IntBinary::Add>;
  table["Sub"] = importBinary<SubOp, IntBinary::Sub>;
  table["Mul"] = importBinary<MulOp, IntBinary::Mul>;
  table["Div"] = importBinary<DivOp, IntBinary::Div>;
  table["Pow"] = importPow;
  table["Neg"] = importSignedUnary<NegOp, false>;
  table["Relu"] = importUnary<ReluOp>;
  table["Sigmoid"] = importUnary<SigmoidOp>;
  table["Tanh"] = importUnary<TanhOp>;
  table["Exp"] = importUnary<ExpOp>;
  table["Log"] = importUnary<LogOp>;
  table["Sqrt"] = importUnary<SqrtOp>;
  table["Abs"] = importSignedUnary<AbsOp, true>;
  table["Erf"] = importErf;
  table["Sin"] = importUnary<SinOp>;
  table["Cos"] = importUnary<CosOp>;
  table["Atan"] = importUnary<AtanOp>;
  table["Floor"] = importUnary<FloorOp>;
  table["Ceil"] = importUnary<CeilOp>;
  table["Round"] = importUnary<RoundOp>;
  table["Reciprocal"] = importReciprocal;
  table["Gelu"] = importGelu;
  table["Max"] = importExtremum<MaxOp, true>;
  table["Min"] = importExtremum<MinOp, false>;
  table["Clip"] = importClip;
  table["Sum"] = importSum<false>;
  table["Mean"] = importSum<true>;
  table["Mod"] = importMod;
}

} // namespace lmc::onnx_import
