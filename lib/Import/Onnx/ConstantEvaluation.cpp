//===- ConstantEvaluation.cpp - float arithmetic on constants at import ---===//
//
// Integer shape arithmetic is folded by each op's handler; float arithmetic
// is built as lmc ops. Where a node's inputs are all compile-time
// constants, what its handler built is evaluated here, so that index
// arithmetic the exporter routes through floats stays a constant: the
// dynamo exporter's adaptive pooling (torchvision's VGG) computes its
// GatherND indices as trunc(float(i * k) / n) with Div, Abs, Floor, Sign
// (Less, Greater, Where) and a Cast back to int64.
//
// The evaluation is the compiled code's: f32 in float, f64 in double (IEEE
// operations, correctly rounded, as the lowered loops compute them without
// fast-math), conversions to integers truncating toward zero. Ops outside
// the small set below, or a conversion out of the integer's range, leave
// the node as built. Pow calls libm as the compiled code does.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// A constant's elements: floats as doubles (exact for f32 and f64), the
/// rest (integers, i1) as int64.
struct Elements {
  RankedTensorType type;
  std::vector<double> floats;
  std::vector<int64_t> ints;

  bool isFloat() const { return isa<FloatType>(type.getElementType()); }
  size_t size() const { return isFloat() ? floats.size() : ints.size(); }
  double asDouble(size_t i) const {
    return isFloat() ? floats[i] : double(ints[i]);
  }
};

std::optional<Elements> fromAttr(DenseElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type)
    return std::nullopt;
  Elements e{type, {}, {}};
  Type element = type.getElementType();
  if (element.isF32() || element.isF64()) {
    for (APFloat v : attr.getValues<APFloat>())
      e.floats.push_back(v.convertToDouble());
  } else if (isa<IntegerType>(element)) {
    for (APInt v : attr.getValues<APInt>())
      e.ints.push_back(element.isInteger(1) ? int64_t(v.getBoolValue())
                                            : v.getSExtValue());
  } else {
    return std::nullopt;
  }
  return e;
}

DenseElementsAttr toAttr(const Elements &e) {
  Type element = e.type.getElementType();
  if (element.isF32()) {
    SmallVector<float> values(e.floats.begin(), e.floats.end());
    return DenseElementsAttr::get(e.type, ArrayRef<float>(values));
  }
  if (element.isF64())
    return DenseElementsAttr::get(e.type, ArrayRef<double>(e.floats));
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (int64_t v : e.ints)
    values.push_back(APInt(width, v, /*isSigned=*/width > 1,
                           /*implicitTrunc=*/true));
  return DenseElementsAttr::get(e.type, values);
}

/// Rounds to the element type: arithmetic on f32 happens in float.
double rounded(Type element, double v) {
  return element.isF32() ? double(float(v)) : v;
}

class Evaluator {
public:
  explicit Evaluator(int64_t maxElements) : maxElements(maxElements) {}

  std::optional<Elements> evaluate(Value value) {
    auto it = known.find(value);
    if (it != known.end())
      return it->second;
    std::optional<Elements> result = compute(value);
    if (result)
      known[value] = *result;
    return result;
  }

private:
  std::optional<Elements> compute(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || type.getNumElements() > maxElements)
      return std::nullopt;
    DenseElementsAttr attr;
    if (matchPattern(value, m_Constant(&attr)))
      return fromAttr(attr);
    Operation *op = value.getDefiningOp();
    if (!op)
      return std::nullopt;
    SmallVector<Elements> operands;
    for (Value operand : op->getOperands()) {
      std::optional<Elements> e = evaluate(operand);
      if (!e)
        return std::nullopt;
      operands.push_back(std::move(*e));
    }
    Elements out{type, {}, {}};
    const size_t n = size_t(type.getNumElements());
    Type element = type.getElementType();
    auto floats = [&](auto f) -> std::optional<Elements> {
      if (!out.isFloat())
        return std::nullopt;
      for (size_t i = 0; i < n; ++i)
        out.floats.push_back(rounded(element, f(i)));
      return out;
    };
    auto a = [&](size_t i) { return operands[0].floats[i]; };
    auto b = [&](size_t i) { return operands[1].floats[i]; };
    if (isa<AddOp>(op))
      return floats([&](size_t i) { return a(i) + b(i); });
    if (isa<SubOp>(op))
      return floats([&](size_t i) { return a(i) - b(i); });
    if (isa<MulOp>(op))
      return floats([&](size_t i) { return a(i) * b(i); });
    if (isa<DivOp>(op))
      return floats([&](size_t i) { return a(i) / b(i); });
    // pow as the compiled code calls it (libm's powf / pow): DINOv2's
    // legacy export takes the side of its position grid as
    // int(num_positions ** 0.5).
    if (isa<PowOp>(op))
      return floats([&](size_t i) {
        return element.isF32() ? double(std::pow(float(a(i)), float(b(i))))
                               : std::pow(a(i), b(i));
      });
    if (isa<SqrtOp>(op))
      return floats([&](size_t i) {
        return element.isF32() ? double(std::sqrt(float(a(i))))
                               : std::sqrt(a(i));
      });
    if (isa<NegOp>(op))
      return floats([&](size_t i) { return -a(i); });
    if (isa<AbsOp>(op))
      return floats([&](size_t i) { return std::fabs(a(i)); });
    if (isa<FloorOp>(op))
      return floats([&](size_t i) { return std::floor(a(i)); });
    if (isa<CeilOp>(op))
      return floats([&](size_t i) { return std::ceil(a(i)); });
    if (auto broadcast = dyn_cast<BroadcastInDimOp>(op))
      return broadcastInDim(operands[0], broadcast.getDims(), out);
    if (auto cmp = dyn_cast<CmpOp>(op))
      return compare(cmp.getPredicate(), operands[0], operands[1], out);
    if (isa<SelectOp>(op)) {
      for (size_t i = 0; i < n; ++i) {
        const Elements &pick = operands[0].ints[i] ? operands[1] : operands[2];
        if (out.isFloat())
          out.floats.push_back(pick.floats[i]);
        else
          out.ints.push_back(pick.ints[i]);
      }
      return out;
    }
    if (isa<ConvertOp>(op))
      return convert(operands[0], out);
    return std::nullopt;
  }

  static std::optional<Elements>
  broadcastInDim(const Elements &in, ArrayRef<int64_t> dims, Elements out) {
    ArrayRef<int64_t> inShape = in.type.getShape();
    ArrayRef<int64_t> outShape = out.type.getShape();
    const int64_t n = out.type.getNumElements();
    SmallVector<int64_t> at(outShape.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t source = 0;
      for (auto [d, dim] : llvm::enumerate(dims))
        source = source * inShape[d] + (inShape[d] == 1 ? 0 : at[dim]);
      if (out.isFloat())
        out.floats.push_back(in.floats[source]);
      else
        out.ints.push_back(in.ints[source]);
      for (int64_t d = int64_t(at.size()) - 1; d >= 0; --d) {
        if (++at[d] < outShape[d])
          break;
        at[d] = 0;
      }
    }
    return out;
  }

  static std::optional<Elements> compare(CmpPredicate predicate,
                                         const Elements &lhs,
                                         const Elements &rhs, Elements out) {
    for (size_t i = 0; i < lhs.size(); ++i)
      out.ints.push_back(
          compareScalars(predicate, lhs.asDouble(i), rhs.asDouble(i)));
    return out;
  }

  static std::optional<Elements> convert(const Elements &in, Elements out) {
    Type element = out.type.getElementType();
    for (size_t i = 0; i < in.size(); ++i) {
      if (out.isFloat()) {
        out.floats.push_back(rounded(element, in.asDouble(i)));
        continue;
      }
      if (!in.isFloat()) {
        out.ints.push_back(element.isInteger(1) ? int64_t(in.ints[i] != 0)
                                                : in.ints[i]);
        continue;
      }
      // fptosi: toward zero; a value outside the integer's range (or NaN)
      // is undefined there, so it is not folded either.
      double v = std::trunc(in.floats[i]);
      unsigned width = element.getIntOrFloatBitWidth();
      if (element.isInteger(1) ||
          !(v >= -std::ldexp(1.0, width - 1) && v < std::ldexp(1.0, width - 1)))
        return std::nullopt;
      out.ints.push_back(int64_t(v));
    }
    return out;
  }

  int64_t maxElements;
  llvm::DenseMap<Value, Elements> known;
};

} // namespace

DenseElementsAttr evaluateConstant(Value value, int64_t maxElements) {
  std::optional<Elements> e = Evaluator(maxElements).evaluate(value);
  return e ? toAttr(*e) : DenseElementsAttr();
}

} // namespace lmc::onnx_import
