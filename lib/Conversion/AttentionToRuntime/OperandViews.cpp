//===- OperandViews.cpp - attention operands as strided views -------------===//

#include "OperandViews.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;

namespace lmc::attention {

SmallVector<int64_t> denseStrides(ArrayRef<int64_t> shape) {
  return computeStrides(shape);
}

View denseView(Value value) {
  return {value, 0,
          denseStrides(cast<RankedTensorType>(value.getType()).getShape())};
}

namespace {

/// The one stride that steps through dimensions `dims` (outer to inner) of
/// a tensor of `shape` laid out by `strides` as one dimension, when they
/// nest (size-1 dimensions take no part); `whenOne` when they hold one
/// element; nothing when they do not nest.
std::optional<int64_t> nestedStride(ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> dims, int64_t whenOne) {
  std::optional<int64_t> stride, inner;
  for (int64_t d : llvm::reverse(dims)) {
    if (shape[d] == 1)
      continue;
    if (inner && strides[d] != *inner)
      return std::nullopt;
    if (!stride)
      stride = strides[d];
    inner = strides[d] * shape[d];
  }
  return stride.value_or(whenOne);
}

/// The op `value` is made from when it is one the views look through, with
/// the value it reads.
Value viewedSource(Operation *op) {
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.hasPureTensorSemantics() ? transpose.getInput() : Value();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return expand.getSrcType().hasStaticShape() ? expand.getSrc() : Value();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return collapse.getSrcType().hasStaticShape() ? collapse.getSrc()
                                                  : Value();
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    bool unit = llvm::all_of(slice.getStaticStrides(),
                             [](int64_t s) { return s == 1; });
    bool fixed = !ShapedType::isDynamicShape(slice.getStaticOffsets()) &&
                 slice.getSourceType().hasStaticShape() &&
                 slice.getType().getRank() == slice.getSourceType().getRank();
    return unit && fixed ? slice.getSource() : Value();
  }
  return Value();
}

/// The view of `op`'s result from the view of what it reads, or nothing
/// when the result's elements are not evenly strided in that buffer.
std::optional<View> step(Operation *op, const View &in) {
  View out{in.root, in.offset, {}};
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    for (int64_t from : transpose.getPermutation())
      out.strides.push_back(in.strides[from]);
    return out;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    for (auto [source, group] :
         llvm::enumerate(expand.getReassociationIndices())) {
      int64_t stride = in.strides[source];
      SmallVector<int64_t> strides(group.size());
      for (int64_t i = int64_t(group.size()) - 1; i >= 0; --i) {
        strides[i] = stride;
        stride *= shape[group[i]];
      }
      out.strides.append(strides);
    }
    return out;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    for (ReassociationIndices group : collapse.getReassociationIndices()) {
      std::optional<int64_t> stride =
          nestedStride(shape, in.strides, group, /*whenOne=*/1);
      if (!stride)
        return std::nullopt;
      out.strides.push_back(*stride);
    }
    return out;
  }
  auto slice = cast<tensor::ExtractSliceOp>(op);
  for (auto [offset, stride] : llvm::zip(slice.getStaticOffsets(), in.strides))
    out.offset += offset * stride;
  out.strides = in.strides;
  return out;
}

} // namespace

View viewOf(Value value, SmallVectorImpl<Operation *> *chain) {
  SmallVector<Operation *> ops;
  Value root = value;
  while (Operation *def = root.getDefiningOp()) {
    Value source = viewedSource(def);
    if (!source)
      break;
    ops.push_back(def);
    root = source;
  }
  View view = denseView(root);
  // From the dense tensor outward; where a step is not strided, its result
  // is the new dense start (bufferization copies it there).
  size_t kept = ops.size();
  for (size_t i = ops.size(); i-- > 0;) {
    std::optional<View> next = step(ops[i], view);
    if (next) {
      view = *next;
      continue;
    }
    view = denseView(ops[i]->getResult(0));
    kept = i;
  }
  if (chain)
    chain->append(ops.begin(), ops.begin() + kept);
  return view;
}

std::optional<SmallVector<MatrixLayout>>
pairLayouts(ArrayRef<int64_t> batchShape, ArrayRef<View> views,
            int64_t pairs[2]) {
  int64_t rank = int64_t(batchShape.size());
  // The one stride of batch dimensions [from, to), 0 when they hold one
  // element (a pair index that does not move).
  auto groupStride = [&](ArrayRef<int64_t> strides, int64_t from,
                         int64_t to) {
    auto dims = llvm::to_vector(llvm::seq<int64_t>(from, to));
    return nestedStride(batchShape, strides, dims, /*whenOne=*/0);
  };
  for (int64_t cut = 0; cut <= rank; ++cut) {
    SmallVector<MatrixLayout> layouts;
    for (const View &view : views) {
      std::optional<int64_t> first = groupStride(view.strides, 0, cut),
                             second = groupStride(view.strides, cut, rank);
      if (!first || !second)
        break;
      layouts.push_back({view.offset,
                         {*first, *second},
                         view.strides[rank],
                         view.strides[rank + 1]});
    }
    if (layouts.size() != views.size())
      continue;
    pairs[0] = pairs[1] = 1;
    for (int64_t d = 0; d < rank; ++d)
      pairs[d < cut ? 0 : 1] *= batchShape[d];
    return layouts;
  }
  return std::nullopt;
}

} // namespace lmc::attention
