//===- Shapes.cpp - Reshape, Flatten, Transpose, Squeeze, Constant --------===//
//
// Shape ops fold when their data input is a compile-time constant (so shape
// tensors stay constants); otherwise they become lmc.reshape/lmc.transpose.
// Shape and Size fold to constants (static shapes). Gather, Concat and Cast are in
// Indexing.cpp / Logical.cpp.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// Binds the node's output to input 0 reshaped to `shape` (any element
/// type: integer labels are reshaped too).
LogicalResult setReshaped(NodeImporter &n, ArrayRef<int64_t> shape) {
  if (DenseElementsAttr constant = n.constantInput(0)) {
    auto type = RankedTensorType::get(shape, constant.getElementType());
    return n.setConstantResult(constant.reshape(type));
  }
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  return n.setResult(buildReshape(n.b, n.loc, *operand, shape));
}

LogicalResult importReshape(NodeImporter &n) {
  SmallVector<StringRef> allowed;
  if (n.opset >= 14)
    allowed.push_back("allowzero");
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<int64_t> allowZero = n.intAttr("allowzero", 0);
  FailureOr<RankedTensorType> type = n.inputType(0);
  FailureOr<SmallVector<int64_t>> requested = n.intsInput(1, "shape");
  if (failed(allowZero) || failed(type) || failed(requested))
    return failure();
  n.rebindReshapeTarget(*requested, *type);

  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  bool hasZero = false;
  for (auto [i, dim] : llvm::enumerate(*requested)) {
    if (dim == -1) {
      if (inferred >= 0)
        return n.error() << "shape has more than one -1";
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (dim < -1)
      return n.error() << "shape has invalid dimension " << dim;
    if (dim == 0) {
      hasZero = true;
      if (!*allowZero) {
        if (static_cast<int64_t>(i) >= type->getRank())
          return n.error() << "shape copies dimension " << i
                           << " (0) of the rank-" << type->getRank()
                           << " input";
        dim = type->getDimSize(i);
      }
    }
    shape.push_back(dim);
    std::optional<int64_t> product = llvm::checkedMul(known, dim);
    if (!product)
      return n.error() << "shape overflows";
    known = *product;
  }
  if (*allowZero && hasZero && inferred >= 0)
    return n.error() << "shape has both 0 and -1 with allowzero=1";
  int64_t count = type->getNumElements();
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      return n.error() << "cannot infer the -1 dimension reshaping " << *type
                       << " to [" << *requested << "]";
    shape[inferred] = count / known;
  } else if (known != count) {
    return n.error() << "cannot reshape " << *type << " to [" << shape
                     << "]: element counts differ";
  }
  return setReshaped(n, shape);
}

LogicalResult importFlatten(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"axis"})))
    return failure();
  FailureOr<int64_t> axis = n.intAttr("axis", 1);
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(axis) || failed(type))
    return failure();
  int64_t rank = type->getRank();
  if (*axis < -rank || *axis > rank)
    return n.error() << "axis " << *axis << " is out of range for rank "
                     << rank;
  int64_t split = *axis < 0 ? *axis + rank : *axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < split ? outer : inner) *= type->getDimSize(d);
  return setReshaped(n, {outer, inner});
}

LogicalResult importSqueeze(NodeImporter &n) {
  bool axesAsInput = n.opset >= 13;
  if (failed(n.checkArity(1, axesAsInput ? 2 : 1)) ||
      failed(n.checkAttributes(axesAsInput ? ArrayRef<StringRef>()
                                           : ArrayRef<StringRef>{"axes"})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> given = n.axes(axesAsInput);
  if (failed(given))
    return failure();
  std::optional<SmallVector<int64_t>> axes = *given;
  SmallVector<int64_t> shape;
  if (!axes) {
    for (int64_t dim : type->getShape())
      if (dim != 1)
        shape.push_back(dim);
    return setReshaped(n, shape);
  }
  FailureOr<SmallVector<int64_t>> normalized =
      n.normalizeAxes(*axes, type->getRank());
  if (failed(normalized))
    return failure();
  for (int64_t d = 0; d < type->getRank(); ++d) {
    if (!llvm::is_contained(*normalized, d)) {
      shape.push_back(type->getDimSize(d));
      continue;
    }
    if (type->getDimSize(d) != 1)
      return n.error() << "cannot squeeze dimension " << d << " of size "
                       << type->getDimSize(d);
  }
  return setReshaped(n, shape);
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  bool axesAsInput = n.opset >= 13;
  if (failed(n.checkArity(axesAsInput ? 2 : 1, axesAsInput ? 2 : 1)) ||
      failed(n.checkAttributes(axesAsInput ? ArrayRef<StringRef>()
                                           : ArrayRef<StringRef>{"axes"})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  // Arity was checked above: opset >= 13 always has the axes input.
  FailureOr<std::optional<SmallVector<int64_t>>> given = n.axes(axesAsInput);
  if (failed(given))
    return failure();
  if (!*given)
    return n.error() << "missing attribute 'axes'";
  SmallVector<int64_t> axes = **given;
  int64_t rank = type->getRank() + static_cast<int64_t>(axes.size());
  FailureOr<SmallVector<int64_t>> normalized = n.normalizeAxes(axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> inShape = type->getShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(*normalized, d)) {
      shape.push_back(1);
    } else {
      shape.push_back(inShape.front());
      inShape = inShape.drop_front();
    }
  }
  return setReshaped(n, shape);
}

LogicalResult importTranspose(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"perm"})))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> permAttr = n.intsAttr("perm");
  FailureOr<RankedTensorType> operandType = n.inputType(0);
  if (failed(permAttr) || failed(operandType))
    return failure();
  RankedTensorType type = *operandType;
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm;
  if (*permAttr)
    perm = **permAttr;
  else
    perm = llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank)));
  SmallVector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return n.error() << "perm has " << perm.size() << " entries for rank "
                     << rank;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return n.error() << "perm [" << perm << "] is not a permutation";
    seen[p] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (DenseElementsAttr data = n.constantInput(0); foldable(data, resultType))
    return n.setConstantResult(remapConstant(data, resultType, [&](int64_t i) {
      SmallVector<int64_t> at = delinearize(i, shape), source(rank);
      for (int64_t d = 0; d < rank; ++d)
        source[perm[d]] = at[d];
      return linearize(source, type.getShape());
    }));
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    return n.setResult(*operand);
  return n.setResult(
      TransposeOp::create(n.b, n.loc, resultType, *operand, perm));
}

LogicalResult importIdentity(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  if (DenseElementsAttr constant = n.constantInput(0))
    return n.setConstantResult(constant);
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  return n.setResult(*operand);
}

LogicalResult importConstant(NodeImporter &n) {
  if (failed(n.checkArity(0, 0)))
    return failure();
  if (n.node.attribute_size() != 1)
    return n.error() << "expected exactly one attribute, got "
                     << n.node.attribute_size();
  const onnx::AttributeProto &a = n.node.attribute(0);
  MLIRContext *ctx = n.b.getContext();
  auto expect = [&](onnx::AttributeProto::AttributeType type,
                    StringRef what) -> LogicalResult {
    if (a.type() != type)
      return n.error() << "attribute '" << a.name() << "' must be " << what;
    return success();
  };
  if (a.name() == "value") {
    if (failed(expect(onnx::AttributeProto::TENSOR, "a tensor")))
      return failure();
    FailureOr<DenseElementsAttr> value = n.tensorAttr(a);
    if (failed(value))
      return failure();
    return n.setConstantResult(*value);
  }
  if (a.name() == "value_float") {
    if (failed(expect(onnx::AttributeProto::FLOAT, "a float")))
      return failure();
    auto type = RankedTensorType::get({}, Float32Type::get(ctx));
    return n.setConstantResult(DenseElementsAttr::get(type, a.f()));
  }
  if (a.name() == "value_floats") {
    if (failed(expect(onnx::AttributeProto::FLOATS, "a list of floats")))
      return failure();
    SmallVector<float> values(a.floats().begin(), a.floats().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      Float32Type::get(ctx));
    return n.setConstantResult(
        DenseElementsAttr::get(type, ArrayRef<float>(values)));
  }
  if (a.name() == "value_int") {
    if (failed(expect(onnx::AttributeProto::INT, "an int")))
      return failure();
    auto type = RankedTensorType::get({}, IntegerType::get(ctx, 64));
    return n.setConstantResult(
        DenseElementsAttr::get(type, static_cast<int64_t>(a.i())));
  }
  if (a.name() == "value_ints") {
    if (failed(expect(onnx::AttributeProto::INTS, "a list of ints")))
      return failure();
    SmallVector<int64_t> values(a.ints().begin(), a.ints().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      IntegerType::get(ctx, 64));
    return n.setConstantResult(
        DenseElementsAttr::get(type, ArrayRef<int64_t>(values)));
  }
  return n.error() << "unsupported attribute '" << a.name() << "'";
}

//===----------------------------------------------------------------------===//
// Shape computations (constants only)
//===----------------------------------------------------------------------===//

LogicalResult importShape(NodeImporter &n) {
  SmallVector<StringRef> allowed;
  if (n.opset >= 15)
    allowed = {"start", "end"};
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  FailureOr<int64_t> start = n.intAttr("start", 0);
  FailureOr<int64_t> end = n.intAttr("end", rank);
  if (failed(start) || failed(end))
    return failure();
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t s = clamp(*start), e = std::max(clamp(*end), clamp(*start));
  SmallVector<int64_t> dims(type->getShape().slice(s, e - s));
  auto resultType = RankedTensorType::get(
      {static_cast<int64_t>(dims.size())}, n.b.getI64Type());
  return n.setConstantResult(
      DenseElementsAttr::get(resultType, ArrayRef<int64_t>(dims)));
}

/// Size: the element count, an i64 scalar known at compile time.
LogicalResult importSize(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  auto resultType = RankedTensorType::get({}, n.b.getI64Type());
  return n.setConstantResult(
      DenseElementsAttr::get(resultType, type->getNumElements()));
}

/// Range(start, limit, delta): PyTorch's arange; every input must be a
/// compile-time scalar (shapes are static).
LogicalResult importRange(NodeImporter &n) {
  if (failed(n.checkArity(3, 3)) || failed(n.checkAttributes({})))
    return failure();
  SmallVector<double> scalars;
  Type elementType;
  for (unsigned i = 0; i < 3; ++i) {
    DenseElementsAttr value = n.constantInput(i);
    if (!value || value.getNumElements() != 1)
      return n.error() << "input " << i
                       << " must be a compile-time scalar (shapes are static)";
    if (elementType && value.getElementType() != elementType)
      return n.error() << "inputs must have one element type";
    elementType = value.getElementType();
    scalars.push_back(doubleValues(value)[0]);
  }
  double start = scalars[0], limit = scalars[1], delta = scalars[2];
  if (delta == 0)
    return n.error() << "delta must not be 0";
  // ONNX: number_of_elements = max(ceil((limit - start) / delta), 0).
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (!(count <= double(kMaxFoldedElements)))
    return n.error() << "would produce more than " << kMaxFoldedElements
                     << " elements (the folding limit)";
  SmallVector<double> values;
  for (int64_t i = 0; i < int64_t(count); ++i)
    values.push_back(start + double(i) * delta);
  auto type = RankedTensorType::get({int64_t(count)}, elementType);
  return n.setConstantResult(constantFromDoubles(type, values));
}

/// ConstantOfShape(shape) with attribute `value` (a one-element tensor,
/// default float 0).
LogicalResult importConstantOfShape(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"value"})))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = n.intsInput(0, "shape");
  if (failed(shape))
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return n.error() << "shape has a negative dimension " << d;
  FailureOr<int64_t> count = checkedNumElements(*shape);
  if (failed(count) || *count > kMaxFoldedElements)
    return n.error() << "shape is too large to fold (at most "
                     << kMaxFoldedElements << " elements)";
  double fill = 0;
  Type elementType = n.b.getF32Type();
  if (const onnx::AttributeProto *a = n.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return n.error() << "attribute 'value' must be a tensor";
    FailureOr<DenseElementsAttr> value = n.tensorAttr(*a);
    if (failed(value))
      return failure();
    if (value->getNumElements() != 1)
      return n.error() << "attribute 'value' must have one element, got "
                       << value->getNumElements();
    fill = doubleValues(*value)[0];
    elementType = value->getElementType();
  }
  auto type = RankedTensorType::get(*shape, elementType);
  return n.setConstantResult(
      constantFromDoubles(type, SmallVector<double>(*count, fill)));
}

} // namespace

void registerShapeOps(OpTable &table) {
  table["Reshape"] = importReshape;
  table["Flatten"] = importFlatten;
  table["Squeeze"] = importSqueeze;
  table["Unsqueeze"] = importUnsqueeze;
  table["Transpose"] = importTranspose;
  table["Identity"] = importIdentity;
  table["Constant"] = importConstant;
  table["Shape"] = importShape;
  table["Size"] = importSize;
  table["Range"] = importRange;
  table["ConstantOfShape"] = importConstantOfShape;
}

} // namespace lmc::onnx_import
