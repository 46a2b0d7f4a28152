//===- Layout.cpp - Pad, DepthToSpace, OneHot, EyeLike, windows -----------===//
//
// Ops that rearrange or pattern a tensor with static shapes: Pad as
// lmc.slice (negative pads, reflected and wrapped borders) and lmc.concat
// (constant and edge borders), DepthToSpace/SpaceToDepth as reshape,
// transpose, reshape; all differentiable through those ops. OneHot compares
// the indices with a constant iota; EyeLike and the Hann, Hamming and
// Blackman windows are constants.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include <cmath>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

RankedTensorType withDim(RankedTensorType type, int64_t axis, int64_t size) {
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = size;
  return RankedTensorType::get(shape, type.getElementType());
}

/// `count` entries of `v` along `axis` from `start` in steps of `stride`.
Value sliceAxis(OpBuilder &b, Location loc, Value v, int64_t axis,
                int64_t start, int64_t stride, int64_t count) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), strides(type.getRank(), 1);
  starts[axis] = start;
  strides[axis] = stride;
  return SliceOp::create(b, loc, withDim(type, axis, count), v, starts,
                         strides);
}

/// Pad: opset 11+ takes pads (and constant_value, axes from 18) as inputs,
/// earlier opsets as attributes. Modes constant, edge, reflect, wrap (19).
LogicalResult importPad(NodeImporter &n) {
  bool asInputs = n.opset >= 11;
  if (failed(n.checkArity(1, asInputs ? 4 : 1)) ||
      failed(n.checkAttributes(asInputs ? ArrayRef<StringRef>{"mode"}
                                        : ArrayRef<StringRef>{"mode", "pads",
                                                              "value"})))
    return failure();
  FailureOr<std::string> modeAttr = n.stringAttr("mode", "constant");
  if (failed(modeAttr))
    return failure();
  const std::string &mode = *modeAttr;
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      !(mode == "wrap" && n.opset >= 19))
    return n.error() << "unsupported mode '" << mode << "'";
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(operand))
    return failure();
  auto type = cast<RankedTensorType>(operand->getType());
  int64_t rank = type.getRank();

  SmallVector<int64_t> pads;
  double value = 0;
  if (asInputs) {
    FailureOr<SmallVector<int64_t>> given = n.intsInput(1, "pads");
    if (failed(given))
      return failure();
    pads = *given;
    if (n.hasInput(2)) {
      DenseElementsAttr c = n.fixedInput(2);
      if (!c || c.getNumElements() != 1)
        return n.error() << "constant_value must be a compile-time float "
                            "scalar";
      value = doubleValues(c).front();
    }
  } else {
    FailureOr<std::optional<SmallVector<int64_t>>> given = n.intsAttr("pads");
    FailureOr<float> v = n.floatAttr("value", 0.0f);
    if (failed(given) || failed(v))
      return failure();
    if (!*given)
      return n.error() << "missing attribute 'pads'";
    pads = **given;
    value = *v;
  }
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (asInputs && n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = n.intsInput(3, "axes");
    if (failed(given))
      return failure();
    SmallVector<int64_t> normalized;
    for (int64_t axis : *given) {
      FailureOr<int64_t> a = n.normalizeAxis(axis, rank);
      if (failed(a))
        return failure();
      normalized.push_back(*a);
    }
    axes = normalized;
  }
  if (pads.size() != 2 * axes.size())
    return n.error() << "pads has " << pads.size() << " values for "
                     << axes.size() << " axes (expected "
                     << 2 * axes.size() << ")";

  OpBuilder &b = n.b;
  Location loc = n.loc;
  Value x = *operand;
  for (size_t i = 0; i < axes.size(); ++i) {
    // A plain variable: lambdas below capture it (C++17 cannot capture a
    // structured binding).
    const int64_t axis = axes[i];
    int64_t before = pads[i], after = pads[i + axes.size()];
    int64_t size = cast<RankedTensorType>(x.getType()).getDimSize(axis);
    // Negative pads crop.
    int64_t cropBefore = std::max<int64_t>(-before, 0);
    int64_t cropAfter = std::max<int64_t>(-after, 0);
    if (cropBefore + cropAfter > size)
      return n.error() << "pads crop more than the " << size
                       << " entries of axis " << axis;
    if (cropBefore || cropAfter) {
      size -= cropBefore + cropAfter;
      x = sliceAxis(b, loc, x, axis, cropBefore, 1, size);
    }
    before = std::max<int64_t>(before, 0);
    after = std::max<int64_t>(after, 0);
    if (!before && !after)
      continue;
    if (size == 0)
      return n.error() << "cannot pad axis " << axis << " with no entries";
    auto xType = cast<RankedTensorType>(x.getType());
    if ((mode == "reflect" && std::max(before, after) >= size) ||
        (mode == "wrap" && std::max(before, after) > size))
      return n.error() << "pads of " << std::max(before, after)
                       << " exceed axis " << axis << " of size " << size
                       << " for mode '" << mode << "'";
    auto border = [&](bool leading, int64_t count) -> Value {
      if (mode == "constant")
        return buildSplat(b, loc, withDim(xType, axis, count), value);
      if (mode == "edge") {
        Value line = sliceAxis(b, loc, x, axis, leading ? 0 : size - 1, 1, 1);
        return buildNumpyBroadcast(
            b, loc, line, withDim(xType, axis, count).getShape());
      }
      if (mode == "reflect") // x[count..1] / x[size-2..size-1-count]
        return sliceAxis(b, loc, x, axis, leading ? count : size - 2, -1,
                         count);
      return sliceAxis(b, loc, x, axis, leading ? size - count : 0, 1, count);
    };
    SmallVector<Value> parts;
    if (before)
      parts.push_back(border(true, before));
    parts.push_back(x);
    if (after)
      parts.push_back(border(false, after));
    x = ConcatOp::create(b, loc, withDim(xType, axis, size + before + after),
                         axis, parts);
  }
  return n.setResult(x);
}

/// DepthToSpace (modes DCR, CRD) and SpaceToDepth on [N, C, H, W].
template <bool toSpace> LogicalResult importDepthSpace(NodeImporter &n) {
  SmallVector<StringRef> allowed = {"blocksize"};
  if (toSpace)
    allowed.push_back("mode");
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<int64_t> block = n.intAttr("blocksize", 0);
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(block) || failed(operand))
    return failure();
  FailureOr<std::string> mode = n.stringAttr("mode", "DCR");
  if (failed(mode))
    return failure();
  if (*mode != "DCR" && *mode != "CRD")
    return n.error() << "unsupported mode '" << *mode << "'";
  auto type = cast<RankedTensorType>(operand->getType());
  if (type.getRank() != 4)
    return n.error() << "expected a 4-D input, got " << type;
  int64_t bs = *block, batch = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  if (bs < 1)
    return n.error() << "blocksize must be positive, got " << bs;
  SmallVector<int64_t> split, perm, result;
  if (toSpace) {
    if (c % (bs * bs) != 0)
      return n.error() << "channels " << c << " are not a multiple of "
                       << bs * bs;
    int64_t cOut = c / (bs * bs);
    if (*mode == "DCR") {
      split = {batch, bs, bs, cOut, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else {
      split = {batch, cOut, bs, bs, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    }
    result = {batch, cOut, h * bs, w * bs};
  } else {
    if (h % bs != 0 || w % bs != 0)
      return n.error() << "height " << h << " and width " << w
                       << " are not multiples of " << bs;
    split = {batch, c, h / bs, bs, w / bs, bs};
    perm = {0, 3, 5, 1, 2, 4};
    result = {batch, c * bs * bs, h / bs, w / bs};
  }
  OpBuilder &b = n.b;
  Location loc = n.loc;
  Value x = buildPermute(b, loc, buildReshape(b, loc, *operand, split), perm);
  return n.setResult(buildReshape(b, loc, x, result));
}

/// EyeLike: ones on diagonal k of a 2-D tensor of the input's shape.
LogicalResult importEyeLike(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes({"dtype", "k"})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  FailureOr<int64_t> k = n.intAttr("k", 0);
  if (failed(type) || failed(k))
    return failure();
  if (type->getRank() != 2)
    return n.error() << "expected a 2-D input, got " << *type;
  Type element = type->getElementType();
  if (const onnx::AttributeProto *dtype = n.attr("dtype")) {
    if (dtype->type() != onnx::AttributeProto::INT)
      return n.error() << "attribute 'dtype' must be an int";
    element = convertElementType(n.b.getContext(), dtype->i());
    if (!element)
      return n.error() << "unsupported dtype "
                       << dataTypeName(static_cast<int32_t>(dtype->i()));
  }
  int64_t rows = type->getDimSize(0), cols = type->getDimSize(1);
  if (rows * cols > kMaxFoldedElements)
    return n.error() << "a " << rows << "x" << cols
                     << " identity is too large to fold";
  SmallVector<double> values(size_t(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    if (r + *k >= 0 && r + *k < cols)
      values[size_t(r * cols + r + *k)] = 1.0;
  return n.setConstantResult(
      constantFromDoubles(RankedTensorType::get({rows, cols}, element), values));
}

/// GatherElements(data, indices, axis): out[p] = data[p with p[axis] =
/// indices[p]] (negative indices count from the end). As a masked sum over
/// a trailing axis of the data's K entries: select(indices == k, data, 0)
/// summed over k, so the VJP (to data) comes from select and reduce_sum;
/// |indices| x K elements.
/// GatherElements of two compile-time constants (a dynamo export's
/// token_type_ids buffer read at the position ids), any element type.
LogicalResult foldGatherElements(NodeImporter &n, DenseElementsAttr data,
                                 DenseElementsAttr indices, int64_t axisAttr) {
  auto dataType = cast<RankedTensorType>(data.getType());
  auto indexType = cast<RankedTensorType>(indices.getType());
  int64_t rank = dataType.getRank();
  if (indexType.getRank() != rank)
    return n.error() << "indices must be an integer tensor of the data's rank "
                     << rank << ", got " << indexType;
  FailureOr<int64_t> axis = n.normalizeAxis(axisAttr, rank);
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && indexType.getDimSize(d) > dataType.getDimSize(d))
      return n.error() << "indices " << indexType << " exceed data "
                       << dataType << " in dimension " << d;
  int64_t k = dataType.getDimSize(*axis);
  SmallVector<int64_t> positions = intValues(indices);
  for (int64_t index : positions)
    if (index < -k || index >= k)
      return n.error() << "index " << index << " is out of range for size "
                       << k;
  auto resultType =
      RankedTensorType::get(indexType.getShape(), dataType.getElementType());
  return n.setConstantResult(remapConstant(data, resultType, [&](int64_t i) {
    SmallVector<int64_t> at = delinearize(i, indexType.getShape());
    int64_t index = positions[i];
    at[*axis] = index < 0 ? index + k : index;
    return linearize(at, dataType.getShape());
  }));
}

/// GatherElements of integer or bool data (no gradient; RoBERTa reads its
/// token-type buffer at run-time position ids): one lmc.gather from the
/// flattened data at each element's position, computed at run time from
/// the index along `axis` (negative ones count from the end, others are
/// clamped as lmc.gather does) and a compile-time offset for the other
/// coordinates. Float data keeps the masked sum, whose VJP autodiff knows.
Value gatherElementsAtPositions(NodeImporter &n, Value data, Value indices,
                                int64_t axis) {
  OpBuilder &b = n.b;
  Location loc = n.loc;
  auto dataType = cast<RankedTensorType>(data.getType());
  auto indexType = cast<RankedTensorType>(indices.getType());
  auto positionType =
      RankedTensorType::get(indexType.getShape(), b.getI64Type());
  Value index = indices;
  if (indexType.getElementType() != b.getI64Type())
    index = ConvertOp::create(b, loc, positionType, index);
  int64_t k = dataType.getDimSize(axis);
  Value negative =
      buildCompare(b, loc, CmpPredicate::lt, index, buildSplat(b, loc, positionType, 0));
  index = buildSelect(
      b, loc, negative,
      AddOp::create(b, loc, index, buildSplat(b, loc, positionType, k)),
      index);
  index = MaxOp::create(b, loc, index, buildSplat(b, loc, positionType, 0));
  index = MinOp::create(b, loc, index, buildSplat(b, loc, positionType, k - 1));
  SmallVector<int64_t> strides(dataType.getRank(), 1);
  for (int64_t d = dataType.getRank() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dataType.getDimSize(d + 1);
  SmallVector<int64_t> offsets;
  for (int64_t i = 0; i < indexType.getNumElements(); ++i) {
    SmallVector<int64_t> at = delinearize(i, indexType.getShape());
    int64_t offset = 0;
    for (int64_t d = 0; d < indexType.getRank(); ++d)
      if (d != axis)
        offset += at[d] * strides[d];
    offsets.push_back(offset);
  }
  Value position = AddOp::create(
      b, loc,
      MulOp::create(b, loc, index,
                    buildSplat(b, loc, positionType, strides[axis])),
      arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(positionType, ArrayRef(offsets))));
  Value flat = buildReshape(b, loc, data, {dataType.getNumElements()});
  return GatherOp::create(
      b, loc,
      RankedTensorType::get(indexType.getShape(), dataType.getElementType()),
      flat, position, /*axis=*/0);
}

LogicalResult importGatherElements(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({"axis"})))
    return failure();
  DenseElementsAttr constantData = n.constantInput(0);
  DenseElementsAttr constantIndices = n.constantInput(1);
  if (constantData && constantIndices &&
      constantIndices.getNumElements() <= kMaxFoldedElements &&
      isa<IntegerType>(constantIndices.getElementType()) &&
      !constantIndices.getElementType().isInteger(1)) {
    FailureOr<int64_t> axisAttr = n.intAttr("axis", 0);
    if (failed(axisAttr))
      return failure();
    return foldGatherElements(n, constantData, constantIndices, *axisAttr);
  }
  FailureOr<RankedTensorType> dataType0 = n.inputType(0);
  if (failed(dataType0))
    return failure();
  bool floatData = isa<FloatType>(dataType0->getElementType());
  FailureOr<Value> data = floatData ? n.floatInput(0) : n.input(0);
  FailureOr<Value> indices = n.input(1);
  FailureOr<int64_t> axisAttr = n.intAttr("axis", 0);
  if (failed(data) || failed(indices) || failed(axisAttr))
    return failure();
  auto dataType = cast<RankedTensorType>(data->getType());
  auto indexType = cast<RankedTensorType>(indices->getType());
  int64_t rank = dataType.getRank();
  if (!isa<IntegerType>(indexType.getElementType()) ||
      indexType.getElementType().isInteger(1) || indexType.getRank() != rank)
    return n.error() << "indices must be an integer tensor of the data's rank "
                     << rank << ", got " << indexType;
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t k = dataType.getDimSize(*axis);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && indexType.getDimSize(d) > dataType.getDimSize(d))
      return n.error() << "indices " << indexType << " exceed data "
                       << dataType << " in dimension " << d;
  if (!floatData) {
    if (indexType.getNumElements() > kMaxFoldedElements)
      return n.error() << "gathering " << indexType.getNumElements()
                       << " elements needs too large a table of offsets";
    return n.setResult(gatherElementsAtPositions(n, *data, *indices, *axis));
  }
  if (indexType.getNumElements() * k > kMaxFoldedElements * 16)
    return n.error() << "gathering " << indexType.getNumElements()
                     << " elements from an axis of " << k
                     << " entries needs too large a mask";

  OpBuilder &b = n.b;
  Location loc = n.loc;
  // The data cut to the indices' extent off the axis, then the axis moved
  // last and a unit dimension put in its place: [..., 1, ..., K].
  SmallVector<int64_t> cut(indexType.getShape());
  cut[*axis] = k;
  Value x = *data;
  if (cut != SmallVector<int64_t>(dataType.getShape()))
    x = SliceOp::create(b, loc, RankedTensorType::get(cut, dataType.getElementType()),
                        x, SmallVector<int64_t>(rank, 0),
                        SmallVector<int64_t>(rank, 1));
  x = buildPermute(b, loc, x, axisLastPermutation(rank, *axis));
  SmallVector<int64_t> withUnit(cut);
  withUnit[*axis] = 1;
  withUnit.push_back(k);
  x = buildReshape(b, loc, x, withUnit);
  SmallVector<int64_t> full(indexType.getShape());
  full.push_back(k);
  x = buildNumpyBroadcast(b, loc, x, full);

  // indices == k (or k - K, for negative indices) along the new last axis.
  SmallVector<int64_t> expanded(indexType.getShape());
  expanded.push_back(1);
  Value idx = buildNumpyBroadcast(
      b, loc, buildReshape(b, loc, *indices, expanded), full);
  Value hit = buildIndexHits(b, loc, idx, rank);
  Value picked = buildSelect(b, loc, hit, x, buildSplatLike(b, loc, x, 0.0));
  SmallVector<int64_t> lastAxis{rank};
  return n.setResult(ReduceSumOp::create(
      b, loc,
      RankedTensorType::get(indexType.getShape(), dataType.getElementType()),
      picked, lastAxis, false));
}

/// HannWindow, HammingWindow, BlackmanWindow: constants of the size input
/// (a compile-time integer): sum over k of a_k cos(2 pi k n / N) with N the
/// size (periodic) or size - 1 (symmetric).
template <int kind> LogicalResult importWindow(NodeImporter &n) {
  if (failed(n.checkArity(1, 1)) ||
      failed(n.checkAttributes({"periodic", "output_datatype"})))
    return failure();
  FailureOr<SmallVector<int64_t>> size = n.intsInput(0, "size");
  FailureOr<int64_t> periodic = n.intAttr("periodic", 1);
  FailureOr<int64_t> dataType = n.intAttr("output_datatype", 1);
  if (failed(size) || failed(periodic) || failed(dataType))
    return failure();
  if (size->size() != 1 || size->front() < 1 ||
      size->front() > kMaxFoldedElements)
    return n.error() << "size must be one positive integer";
  Type element = convertElementType(n.b.getContext(), int32_t(*dataType));
  if (!element)
    return n.error() << "unsupported output_datatype "
                     << dataTypeName(static_cast<int32_t>(*dataType));
  int64_t count = size->front();
  double period = double(*periodic ? count : std::max<int64_t>(count - 1, 1));
  // Hann, Hamming (alpha 25/46), Blackman (0.42, 0.5, 0.08).
  static constexpr double kCoefficients[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46.0, 21.0 / 46.0, 0.0}, {0.42, 0.5, 0.08}};
  const double *a = kCoefficients[kind];
  SmallVector<double> values;
  for (int64_t i = 0; i < count; ++i) {
    double phase = 2.0 * M_PI * double(i) / period;
    values.push_back(a[0] - a[1] * std::cos(phase) + a[2] * std::cos(2 * phase));
  }
  return n.setConstantResult(
      constantFromDoubles(RankedTensorType::get({count}, element), values));
}

/// OneHot(indices, depth, values): values[1] where the index (negative
/// ones count from depth) equals the position along the new axis,
/// values[0] elsewhere. depth must be a compile-time constant.
LogicalResult importOneHot(NodeImporter &n) {
  if (failed(n.checkArity(3, 3)) || failed(n.checkAttributes({"axis"})))
    return failure();
  FailureOr<RankedTensorType> indicesType = n.inputType(0);
  if (failed(indicesType))
    return failure();
  // depth: one number of any type (the tests pass a float).
  DenseElementsAttr depthConstant = n.fixedInput(1);
  if (!depthConstant || depthConstant.getNumElements() != 1)
    return n.error() << "depth must be a compile-time float scalar or "
                        "integer";
  double depthValue = doubleValues(depthConstant).front();
  FailureOr<Value> values = n.floatInput(2);
  if (failed(values))
    return failure();
  auto valuesType = cast<RankedTensorType>(values->getType());
  if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
    return n.error() << "values must be an [off, on] pair, got " << valuesType;
  if (!(depthValue >= 1 && depthValue <= double(kMaxFoldedElements)))
    return n.error() << "depth must be positive, got " << depthValue;
  int64_t depth = int64_t(depthValue);
  int64_t rank = indicesType->getRank();
  FailureOr<int64_t> axisAttr = n.intAttr("axis", -1);
  if (failed(axisAttr))
    return failure();
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, rank + 1);
  FailureOr<Value> indices = n.input(0);
  if (failed(axis) || failed(indices))
    return failure();
  Type indexElement = indicesType->getElementType();
  if (indexElement.isInteger(1))
    return n.error() << "indices must be numbers, got " << *indicesType;

  OpBuilder &b = n.b;
  Location loc = n.loc;
  SmallVector<int64_t> shape(indicesType->getShape());
  shape.insert(shape.begin() + *axis, depth);
  SmallVector<int64_t> expanded(indicesType->getShape());
  expanded.insert(expanded.begin() + *axis, 1);
  Value idx = buildNumpyBroadcast(
      b, loc, buildReshape(b, loc, *indices, expanded), shape);
  Value hit = buildIndexHits(b, loc, idx, *axis);
  auto resultType = RankedTensorType::get(shape, valuesType.getElementType());
  Value like = buildSplat(b, loc, resultType, 0.0);
  auto pick = [&](int64_t i) {
    Value one = sliceAxis(b, loc, *values, 0, i, 1, 1);
    return buildBroadcastScalar(b, loc, buildReshape(b, loc, one, {}), like);
  };
  return n.setResult(buildSelect(b, loc, hit, pick(1), pick(0)));
}

} // namespace

void registerLayoutOps(OpTable &table) {
  table["Pad"] = importPad;
  table["DepthToSpace"] = importDepthSpace<true>;
  table["SpaceToDepth"] = importDepthSpace<false>;
  table["EyeLike"] = importEyeLike;
  table["OneHot"] = importOneHot;
  table["GatherElements"] = importGatherElements;
  table["HannWindow"] = importWindow<0>;
  table["HammingWindow"] = importWindow<1>;
  table["BlackmanWindow"] = importWindow<2>;
}

} // namespace lmc::onnx_import
