//===- Indexing.cpp - Gather, Concat, Slice, Split(ToSequence), Expand... -===//
//
// Data movement. Each op folds when its data inputs are compile-time
// constants (shape computations of exported models); on float values it
// becomes lmc.gather / lmc.concat / lmc.slice, or a broadcast, reshape or
// select. Indices, shapes, starts, ends, axes, steps, splits, repeats and k
// must be compile-time constants.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "TorchExport.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

constexpr unsigned kUnbounded = std::numeric_limits<unsigned>::max();

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

LogicalResult importGather(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({"axis"})))
    return failure();
  FailureOr<int64_t> axisAttr = n.intAttr("axis", 0);
  FailureOr<RankedTensorType> dataType = n.inputType(0);
  FailureOr<RankedTensorType> indicesType = n.inputType(1);
  if (failed(axisAttr) || failed(dataType) || failed(indicesType))
    return failure();
  if (!isa<IntegerType>(indicesType->getElementType()) ||
      indicesType->getElementType().isInteger(1))
    return n.error() << "indices must be an int32 or int64 tensor, got "
                     << *indicesType;
  if (dataType->getRank() == 0)
    return n.error() << "data must have rank >= 1";
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, dataType->getRank());
  if (failed(axis))
    return failure();
  DenseElementsAttr indices = n.constantInput(1);
  DenseElementsAttr reboundIndices =
      n.rebindStridedIndices(indices, *dataType);
  if (reboundIndices) {
    indices = reboundIndices;
    indicesType = cast<RankedTensorType>(indices.getType());
  }
  int64_t size = dataType->getDimSize(*axis);
  SmallVector<int64_t> shape(dataType->getShape().take_front(*axis));
  llvm::append_range(shape, indicesType->getShape());
  llvm::append_range(shape, dataType->getShape().drop_front(*axis + 1));
  auto resultType = RankedTensorType::get(shape, dataType->getElementType());

  if (indices)
    for (int64_t index : intValues(indices))
      if (index < -size || index >= size)
        return n.error() << "index " << index << " is out of range for size "
                         << size;
  DenseElementsAttr data = n.constantInput(0);
  if (indices && foldable(data, resultType)) {
    SmallVector<int64_t> indexValues = intValues(indices);
    ArrayRef<int64_t> dataShape = dataType->getShape();
    int64_t indexRank = indicesType->getRank();
    return n.setConstantResult(remapConstant(data, resultType, [&](int64_t i) {
      SmallVector<int64_t> at = delinearize(i, shape);
      SmallVector<int64_t> source(at.begin(), at.begin() + *axis);
      int64_t index = indexValues[linearize(
          ArrayRef<int64_t>(at).slice(*axis, indexRank),
          indicesType->getShape())];
      source.push_back(index < 0 ? index + size : index);
      source.append(at.begin() + *axis + indexRank, at.end());
      return linearize(source, dataShape);
    }));
  }
  FailureOr<Value> operand = n.input(0);
  FailureOr<Value> indexValue =
      reboundIndices
          ? FailureOr<Value>(
                arith::ConstantOp::create(n.b, n.loc, reboundIndices))
          : n.input(1);
  if (failed(operand) || failed(indexValue))
    return failure();
  // A dynamo export's embedding keeps its padding row out of training, as
  // PyTorch's nn.Embedding(padding_idx=...) does.
  std::string unsupported = torchEmbeddingUnsupported(n.node);
  if (!unsupported.empty())
    return n.error() << "the embedding was exported with " << unsupported
                     << "=True, which lmc does not train";
  IntegerAttr padding;
  if (std::optional<int64_t> index = torchEmbeddingPaddingIndex(n.node)) {
    if (*axis != 0)
      return n.error() << "the FX record gives a padding_idx to a Gather "
                          "along axis "
                       << *axis << " (an embedding gathers rows, axis 0)";
    if (*index >= size)
      return n.error() << "the embedding's padding_idx " << *index
                       << " is not a row of the " << *dataType << " table";
    padding = n.b.getI64IntegerAttr(*index);
  }
  return n.setResult(GatherOp::create(n.b, n.loc, resultType, *operand,
                                      *indexValue, *axis, padding));
}

/// GatherND with compile-time indices [..., k] (batch_dims 0): the data's
/// first k dimensions flattened into one, the indices turned into positions
/// in it at compile time, one lmc.gather along it (its VJP scatters the
/// gradient back), then the result [indices[:-1], data[k:]]. Swin's
/// relative position bias reads its table this way.
LogicalResult importGatherND(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({"batch_dims"})))
    return failure();
  FailureOr<int64_t> batchDims = n.intAttr("batch_dims", 0);
  FailureOr<RankedTensorType> dataType = n.inputType(0);
  FailureOr<RankedTensorType> indicesType = n.inputType(1);
  if (failed(batchDims) || failed(dataType) || failed(indicesType))
    return failure();
  if (*batchDims != 0)
    return n.error() << "batch_dims = " << *batchDims
                     << " is not supported (only 0)";
  DenseElementsAttr indices = n.constantInput(1);
  if (!indices || !isa<IntegerType>(indicesType->getElementType()) ||
      indicesType->getElementType().isInteger(1))
    return n.error() << "indices must be a compile-time integer tensor, got "
                     << *indicesType;
  int64_t rank = dataType->getRank(), indexRank = indicesType->getRank();
  int64_t k = indexRank == 0 ? 0 : indicesType->getDimSize(indexRank - 1);
  if (indexRank < 1 || k < 1 || k > rank)
    return n.error() << "indices " << *indicesType
                     << " must end in a dimension of 1 to " << rank
                     << " entries (the data's rank)";
  ArrayRef<int64_t> dims = dataType->getShape();
  int64_t rows = 1;
  for (int64_t d = 0; d < k; ++d)
    rows *= dims[d];
  SmallVector<int64_t> values = intValues(indices), positions;
  for (size_t i = 0; i < values.size(); i += k) {
    int64_t position = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t index = values[i + d];
      if (index < -dims[d] || index >= dims[d])
        return n.error() << "index " << index << " is out of range for size "
                         << dims[d];
      position = position * dims[d] + (index < 0 ? index + dims[d] : index);
    }
    positions.push_back(position);
  }
  SmallVector<int64_t> flatShape = {rows};
  llvm::append_range(flatShape, dims.drop_front(k));
  SmallVector<int64_t> shape(indicesType->getShape().drop_back());
  auto positionType = RankedTensorType::get(shape, n.b.getI64Type());
  llvm::append_range(shape, dims.drop_front(k));
  auto resultType = RankedTensorType::get(shape, dataType->getElementType());
  int64_t inner = 1;
  for (int64_t size : dims.drop_front(k))
    inner *= size;
  if (DenseElementsAttr data = n.constantInput(0); foldable(data, resultType))
    return n.setConstantResult(remapConstant(data, resultType, [&](int64_t i) {
      return positions[i / inner] * inner + i % inner;
    }));
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  Value flat = buildReshape(n.b, n.loc, *operand, flatShape);
  Value where = arith::ConstantOp::create(
      n.b, n.loc, DenseElementsAttr::get(positionType, ArrayRef(positions)));
  return n.setResult(
      GatherOp::create(n.b, n.loc, resultType, flat, where, /*axis=*/0));
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

LogicalResult importConcat(NodeImporter &n) {
  if (failed(n.checkArity(1, kUnbounded)) ||
      failed(n.checkAttributes({"axis"})))
    return failure();
  const onnx::AttributeProto *axisAttr = n.attr("axis");
  if (!axisAttr && n.opset >= 4)
    return n.error() << "missing attribute 'axis'";
  FailureOr<int64_t> axisValue = n.intAttr("axis", 1);
  FailureOr<RankedTensorType> firstType = n.inputType(0);
  if (failed(axisValue) || failed(firstType))
    return failure();
  int64_t rank = firstType->getRank();
  if (rank == 0)
    return n.error() << "inputs must have rank >= 1";
  FailureOr<int64_t> axis = n.normalizeAxis(*axisValue, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(firstType->getShape());
  shape[*axis] = 0;
  bool allConstant = true;
  SmallVector<RankedTensorType> types;
  for (int i = 0; i < n.node.input_size(); ++i) {
    FailureOr<RankedTensorType> type = n.inputType(i);
    if (failed(type))
      return failure();
    if (type->getElementType() != firstType->getElementType() ||
        type->getRank() != rank)
      return n.error() << "inputs must have the same rank and element type";
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && type->getDimSize(d) != shape[d])
        return n.error() << "input " << i << " has shape ["
                         << type->getShape()
                         << "] that differs outside the axis";
    shape[*axis] += type->getDimSize(*axis);
    types.push_back(*type);
    allConstant &= static_cast<bool>(n.constantInput(i));
  }
  auto resultType = RankedTensorType::get(shape, firstType->getElementType());
  if (allConstant && resultType.getNumElements() <= kMaxFoldedElements) {
    SmallVector<Attribute> values;
    values.reserve(resultType.getNumElements());
    SmallVector<SmallVector<Attribute>> parts;
    for (int i = 0; i < n.node.input_size(); ++i) {
      DenseElementsAttr c = n.constantInput(i);
      if (c.isSplat())
        parts.emplace_back(c.getNumElements(), c.getSplatValue<Attribute>());
      else
        parts.push_back(llvm::to_vector(c.getValues<Attribute>()));
    }
    for (int64_t j = 0; j < resultType.getNumElements(); ++j) {
      SmallVector<int64_t> at = delinearize(j, shape);
      int64_t position = at[*axis];
      for (auto [i, type] : llvm::enumerate(types)) {
        if (position < type.getDimSize(*axis)) {
          at[*axis] = position;
          values.push_back(parts[i][linearize(at, type.getShape())]);
          break;
        }
        position -= type.getDimSize(*axis);
      }
    }
    return n.setConstantResult(DenseElementsAttr::get(resultType, values));
  }
  SmallVector<Value> inputs;
  for (int i = 0; i < n.node.input_size(); ++i) {
    FailureOr<Value> input = n.input(i);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }
  if (inputs.size() == 1)
    return n.setResult(inputs.front());
  return n.setResult(
      ConcatOp::create(n.b, n.loc, resultType, *axis, inputs));
}

//===----------------------------------------------------------------------===//
// Slice and Split
//===----------------------------------------------------------------------===//

/// A strided window of a tensor: the first index, the step and the count
/// along every dimension.
struct Window {
  SmallVector<int64_t> start, stride, count;
};

/// The window of input 0 (folded on constants).
FailureOr<Binding> windowOf(NodeImporter &n, const Window &w) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  auto resultType = RankedTensorType::get(w.count, type->getElementType());
  if (DenseElementsAttr data = n.constantInput(0);
      foldable(data, resultType)) {
    return Binding{Value(),
                   remapConstant(data, resultType, [&](int64_t i) {
                     SmallVector<int64_t> at = delinearize(i, w.count);
                     for (size_t d = 0; d < at.size(); ++d)
                       at[d] = w.start[d] + at[d] * w.stride[d];
                     return linearize(at, type->getShape());
                   })};
  }
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  bool identity = ArrayRef<int64_t>(w.count) == type->getShape() &&
                  llvm::all_of(w.start, [](int64_t s) { return s == 0; }) &&
                  llvm::all_of(w.stride, [](int64_t s) { return s == 1; });
  if (identity)
    return Binding{*operand, nullptr};
  return Binding{SliceOp::create(n.b, n.loc, resultType, *operand, w.start,
                                 w.stride),
                 nullptr};
}

/// Binds output `output` to the window of input 0.
LogicalResult setWindow(NodeImporter &n, const Window &w, unsigned output) {
  FailureOr<Binding> window = windowOf(n, w);
  if (failed(window))
    return failure();
  return n.setBindingResult(*window, output);
}

Window fullWindow(RankedTensorType type) {
  Window w;
  w.start.assign(type.getRank(), 0);
  w.stride.assign(type.getRank(), 1);
  w.count.assign(type.getShape().begin(), type.getShape().end());
  return w;
}

LogicalResult importSlice(NodeImporter &n) {
  bool asInputs = n.opset >= 10;
  if (failed(n.checkArity(asInputs ? 3 : 1, asInputs ? 5 : 1)) ||
      failed(n.checkAttributes(asInputs
                                   ? ArrayRef<StringRef>()
                                   : ArrayRef<StringRef>{"starts", "ends",
                                                         "axes"})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  auto read = [&](unsigned input, StringRef name,
                  SmallVector<int64_t> &out) -> LogicalResult {
    if (asInputs) {
      if (!n.hasInput(input))
        return success();
      FailureOr<SmallVector<int64_t>> v = n.intsInput(input, name);
      if (failed(v))
        return failure();
      out = *v;
      return success();
    }
    FailureOr<std::optional<SmallVector<int64_t>>> v = n.intsAttr(name);
    if (failed(v))
      return failure();
    if (*v)
      out = **v;
    else if (name != "axes")
      return n.error() << "missing attribute '" << name << "'";
    return success();
  };
  if (failed(read(1, "starts", starts)) || failed(read(2, "ends", ends)) ||
      failed(read(3, "axes", axes)) || failed(read(4, "steps", steps)))
    return failure();
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts.size()));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return n.error() << "starts, ends, axes and steps must have the same "
                        "length";
  Window w = fullWindow(*type);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = n.normalizeAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return n.error() << "axes contain a repeated axis";
    seen[*axis] = true;
    int64_t dim = type->getDimSize(*axis), step = steps[i];
    if (step == 0)
      return n.error() << "steps must be non-zero";
    // ONNX clamping: [0, dim] for positive steps, [-1, dim - 1] for
    // negative ones (ends only), after adding dim to negative values.
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t count =
        step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
    count = std::max<int64_t>(count, 0);
    w.start[*axis] = count == 0 ? 0 : start;
    w.stride[*axis] = step;
    w.count[*axis] = count;
  }
  return setWindow(n, w, 0);
}

/// The windows that cut input 0 of `type` along `axis` into pieces of
/// `sizes`, which must be non-negative and sum to the dimension.
FailureOr<SmallVector<Window>> splitWindows(NodeImporter &n,
                                            RankedTensorType type,
                                            int64_t axis,
                                            ArrayRef<int64_t> sizes) {
  int64_t dim = type.getDimSize(axis), total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return n.error() << "split sizes must be non-negative";
    total += size;
  }
  if (total != dim)
    return n.error() << "split sizes sum to " << total << ", not " << dim;
  SmallVector<Window> windows;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Window w = fullWindow(type);
    w.start[axis] = size == 0 ? 0 : offset;
    w.count[axis] = size;
    offset += size;
    windows.push_back(w);
  }
  return windows;
}

LogicalResult importSplit(NodeImporter &n) {
  bool splitAsInput = n.opset >= 13;
  SmallVector<StringRef> allowed = {"axis"};
  if (!splitAsInput)
    allowed.push_back("split");
  if (n.opset >= 18)
    allowed.push_back("num_outputs");
  unsigned outputs = n.node.output_size();
  if (failed(n.checkArity(1, splitAsInput ? 2 : 1, outputs)) ||
      failed(n.checkAttributes(allowed)))
    return failure();
  FailureOr<int64_t> axisAttr = n.intAttr("axis", 0);
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(axisAttr) || failed(type))
    return failure();
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, type->getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type->getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (splitAsInput && n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = n.intsInput(1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  } else if (!splitAsInput) {
    FailureOr<std::optional<SmallVector<int64_t>>> given = n.intsAttr("split");
    if (failed(given))
      return failure();
    if (*given)
      sizes = **given;
  }
  if (sizes.empty()) {
    FailureOr<int64_t> numOutputs = n.intAttr("num_outputs", outputs);
    if (failed(numOutputs))
      return failure();
    if (*numOutputs != outputs || outputs == 0)
      return n.error() << "num_outputs " << *numOutputs << " differs from the "
                       << outputs << " outputs";
    // Equal pieces; from opset 18 the last one may be smaller.
    int64_t piece = (dim + outputs - 1) / outputs;
    if (n.opset < 18 && dim % outputs != 0)
      return n.error() << "dimension " << dim << " does not split evenly into "
                       << outputs << " outputs";
    for (unsigned i = 0; i < outputs; ++i)
      sizes.push_back(std::clamp<int64_t>(dim - i * piece, 0, piece));
  }
  if (sizes.size() != outputs)
    return n.error() << "split has " << sizes.size() << " entries for "
                     << outputs << " outputs";
  FailureOr<SmallVector<Window>> windows =
      splitWindows(n, *type, *axis, sizes);
  if (failed(windows))
    return failure();
  for (auto [i, w] : llvm::enumerate(*windows))
    if (failed(setWindow(n, w, i)))
      return failure();
  return success();
}

/// SplitToSequence: the pieces of input 0 along `axis` as a sequence.
/// `split` a scalar (pieces of that size, the last one smaller), a list of
/// sizes, or absent (pieces of 1, dropped from the shape unless
/// `keepdims`). Only SequenceAt reads the result.
LogicalResult importSplitToSequence(NodeImporter &n) {
  if (failed(n.checkArity(1, 2)) ||
      failed(n.checkAttributes({"axis", "keepdims"})))
    return failure();
  FailureOr<int64_t> axisAttr = n.intAttr("axis", 0);
  FailureOr<int64_t> keepdims = n.intAttr("keepdims", 1);
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(axisAttr) || failed(keepdims) || failed(type))
    return failure();
  FailureOr<int64_t> axis = n.normalizeAxis(*axisAttr, type->getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type->getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (n.hasInput(1)) {
    DenseElementsAttr split = n.constantInput(1);
    FailureOr<SmallVector<int64_t>> given = n.intsInput(1, "split");
    if (failed(given))
      return failure();
    if (split.getType().getRank() == 0) {
      int64_t piece = given->front();
      if (piece <= 0)
        return n.error() << "split must be positive, got " << piece;
      for (int64_t offset = 0; offset < dim; offset += piece)
        sizes.push_back(std::min(piece, dim - offset));
    } else {
      sizes = *given;
    }
  } else {
    sizes.assign(dim, 1);
    squeeze = *keepdims == 0;
  }
  FailureOr<SmallVector<Window>> windows =
      splitWindows(n, *type, *axis, sizes);
  if (failed(windows))
    return failure();
  std::vector<Binding> pieces;
  for (const Window &w : *windows) {
    FailureOr<Binding> piece = windowOf(n, w);
    if (failed(piece))
      return failure();
    if (squeeze) {
      SmallVector<int64_t> shape(type->getShape());
      shape.erase(shape.begin() + *axis);
      auto squeezed = RankedTensorType::get(shape, type->getElementType());
      if (piece->constant)
        piece->constant = piece->constant.reshape(squeezed);
      else
        piece->value = ReshapeOp::create(n.b, n.loc, squeezed, piece->value);
    }
    pieces.push_back(*piece);
  }
  return n.setSequenceResult(std::move(pieces));
}

/// SequenceAt: element `position` (a compile-time scalar; negative counts
/// from the end) of a sequence.
LogicalResult importSequenceAt(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<ArrayRef<Binding>> sequence = n.sequenceInput(0);
  FailureOr<SmallVector<int64_t>> position = n.intsInput(1, "position");
  if (failed(sequence) || failed(position))
    return failure();
  if (position->size() != 1)
    return n.error() << "position must be a scalar";
  int64_t size = sequence->size(), at = position->front();
  if (at < -size || at >= size)
    return n.error() << "position " << at << " is outside the sequence of "
                     << size << " tensors";
  return n.setBindingResult((*sequence)[at < 0 ? at + size : at]);
}

//===----------------------------------------------------------------------===//
// Expand, Tile, Trilu
//===----------------------------------------------------------------------===//

LogicalResult importExpand(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  FailureOr<SmallVector<int64_t>> requested = n.intsInput(1, "shape");
  if (failed(type) || failed(requested))
    return failure();
  if (int64_t(requested->size()) == type->getRank())
    n.rebindBatch(*requested, *type, /*broadcasts=*/true);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(type->getShape(), *requested);
  if (failed(shape))
    return n.error() << "cannot expand " << *type << " to [" << *requested
                     << "]";
  auto resultType = RankedTensorType::get(*shape, type->getElementType());
  if (DenseElementsAttr data = n.constantInput(0); foldable(data, resultType))
    return n.setConstantResult(remapConstant(data, resultType, [&](int64_t i) {
      return broadcastSource(i, *shape, type->getShape());
    }));
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  return n.setResult(buildNumpyBroadcast(n.b, n.loc, *operand, *shape));
}

LogicalResult importTile(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<RankedTensorType> type = n.inputType(0);
  FailureOr<SmallVector<int64_t>> repeats = n.intsInput(1, "repeats");
  if (failed(type) || failed(repeats))
    return failure();
  int64_t rank = type->getRank();
  if (static_cast<int64_t>(repeats->size()) != rank)
    return n.error() << "repeats has " << repeats->size()
                     << " entries for rank " << rank;
  SmallVector<int64_t> shape, interleaved, unitInterleaved;
  for (int64_t d = 0; d < rank; ++d) {
    if ((*repeats)[d] < 0)
      return n.error() << "repeats must be non-negative";
    shape.push_back(type->getDimSize(d) * (*repeats)[d]);
    interleaved.append({(*repeats)[d], type->getDimSize(d)});
    unitInterleaved.append({1, type->getDimSize(d)});
  }
  auto resultType = RankedTensorType::get(shape, type->getElementType());
  if (DenseElementsAttr data = n.constantInput(0); foldable(data, resultType))
    return n.setConstantResult(remapConstant(data, resultType, [&](int64_t i) {
      SmallVector<int64_t> at = delinearize(i, shape);
      for (int64_t d = 0; d < rank; ++d)
        at[d] %= type->getDimSize(d);
      return linearize(at, type->getShape());
    }));
  FailureOr<Value> operand = n.input(0);
  if (failed(operand))
    return failure();
  // [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0 d0, r1 d1].
  Value unit = buildReshape(n.b, n.loc, *operand, unitInterleaved);
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, 2 * rank));
  Value spread = unit;
  if (ArrayRef<int64_t>(interleaved) != ArrayRef<int64_t>(unitInterleaved))
    spread = BroadcastInDimOp::create(
        n.b, n.loc, RankedTensorType::get(interleaved, type->getElementType()),
        unit, dims);
  return n.setResult(buildReshape(n.b, n.loc, spread, shape));
}

LogicalResult importTrilu(NodeImporter &n) {
  if (failed(n.checkArity(1, 2)) || failed(n.checkAttributes({"upper"})))
    return failure();
  FailureOr<int64_t> upper = n.intAttr("upper", 1);
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(upper) || failed(type))
    return failure();
  int64_t k = 0;
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = n.intsInput(1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return n.error() << "k must be a scalar";
    k = given->front();
  }
  int64_t rank = type->getRank();
  if (rank < 2)
    return n.error() << "input must have rank >= 2";
  int64_t rows = type->getDimSize(rank - 2), cols = type->getDimSize(rank - 1);
  auto keep = [&](int64_t linear) {
    int64_t j = linear % cols, i = (linear / cols) % rows;
    return *upper ? j - i >= k : j - i <= k;
  };
  if (DenseElementsAttr data = n.constantInput(0); foldable(data, *type)) {
    SmallVector<double> values = doubleValues(data);
    if (data.isSplat())
      values.assign(type->getNumElements(), values.front());
    for (int64_t i = 0; i < type->getNumElements(); ++i)
      if (!keep(i))
        values[i] = 0;
    return n.setConstantResult(constantFromDoubles(*type, values));
  }
  FailureOr<Value> operand = n.floatInput(0);
  if (failed(operand))
    return failure();
  // A compile-time mask of the last two dimensions, broadcast and selected.
  SmallVector<bool> mask;
  for (int64_t i = 0; i < rows * cols; ++i)
    mask.push_back(keep(i));
  auto maskType = RankedTensorType::get({rows, cols}, n.b.getI1Type());
  Value maskValue = arith::ConstantOp::create(
      n.b, n.loc, maskType, DenseElementsAttr::get(maskType, mask));
  Value fullMask =
      buildNumpyBroadcast(n.b, n.loc, maskValue, type->getShape());
  Value zero = buildSplatLike(n.b, n.loc, *operand, 0.0);
  return n.setResult(SelectOp::create(n.b, n.loc, operand->getType(), fullMask,
                                      *operand, zero));
}

} // namespace

void registerIndexingOps(OpTable &table) {
  table["Gather"] = importGather;
  table["Concat"] = importConcat;
  table["Slice"] = importSlice;
  table["GatherND"] = importGatherND;
  table["Split"] = importSplit;
  table["SplitToSequence"] = importSplitToSequence;
  table["SequenceAt"] = importSequenceAt;
  table["Expand"] = importExpand;
  table["Tile"] = importTile;
  table["Trilu"] = importTrilu;
}

} // namespace lmc::onnx_import
