//===- OperandViews.cpp - attention operands as strided views -------------===//

#include "OperandViews.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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

/// The strides of a tensor of `shape` whose dimension groups `groups` are
/// one dimension each of stride `strides[group]` (row-major within).
SmallVector<int64_t> splitStrides(ArrayRef<int64_t> shape,
                                  ArrayRef<ReassociationIndices> groups,
                                  ArrayRef<int64_t> strides) {
  SmallVector<int64_t> split;
  for (auto [merged, group] : llvm::enumerate(groups)) {
    int64_t stride = strides[merged];
    SmallVector<int64_t> inner(group.size());
    for (int64_t i = int64_t(group.size()) - 1; i >= 0; --i) {
      inner[i] = stride;
      stride *= shape[group[i]];
    }
    split.append(inner);
  }
  return split;
}

/// Whether `slice` (extract_slice or insert_slice) is a box of `whole` at
/// fixed offsets, one element per step, of the same rank, `whole` static:
/// the part's view is the whole's at an offset (atOffsets).
bool isBoxOf(OffsetSizeAndStrideOpInterface slice, RankedTensorType whole,
             RankedTensorType part) {
  return llvm::all_of(slice.getStaticStrides(),
                      [](int64_t s) { return s == 1; }) &&
         !ShapedType::isDynamicShape(slice.getStaticOffsets()) &&
         whole.hasStaticShape() && part.getRank() == whole.getRank();
}

/// The view of `slice`'s box (isBoxOf) from the view of the whole.
View atOffsets(OffsetSizeAndStrideOpInterface slice, const View &whole) {
  View part = whole;
  for (auto [offset, stride] :
       llvm::zip(slice.getStaticOffsets(), whole.strides))
    part.offset += offset * stride;
  return part;
}

/// The op `value` is made from when it is one the views look through, with
/// the value it reads.
Value viewedSource(Operation *op) {
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.hasPureTensorSemantics() ? transpose.getInput() : Value();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return expand.getSrcType().hasStaticShape() ? expand.getSrc() : Value();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return collapse.getSrcType().hasStaticShape() ? collapse.getSrc() : Value();
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return isBoxOf(slice, slice.getSourceType(), slice.getType())
               ? slice.getSource()
               : Value();
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
    out.strides = splitStrides(expand.getResultType().getShape(),
                               expand.getReassociationIndices(), in.strides);
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
  return atOffsets(cast<tensor::ExtractSliceOp>(op), in);
}

/// Whether `insert` puts a whole static tensor into a box of a static one.
bool insertsDensely(tensor::InsertSliceOp insert) {
  return isBoxOf(insert, insert.getDestType(), insert.getSourceType()) &&
         insert.getSourceType().hasStaticShape();
}

/// The insert_slice that puts `value` into a larger tensor through
/// single-use transposes and collapse_shapes (appended to `through`, in
/// order), if any.
tensor::InsertSliceOp insertOf(Value value,
                               SmallVectorImpl<Operation *> &through) {
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    auto transpose = dyn_cast<linalg::TransposeOp>(user);
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
    auto insert = dyn_cast<tensor::InsertSliceOp>(user);
    if (transpose && transpose.hasPureTensorSemantics() &&
        transpose.getInput() == value)
      value = transpose.getResult()[0];
    else if (collapse && collapse.getSrcType().hasStaticShape())
      value = collapse.getResult();
    else
      return insert && insert.getSource() == value && insertsDensely(insert)
                 ? insert
                 : nullptr;
    through.push_back(user);
  }
  return nullptr;
}

/// The view of what `op` (a transpose, collapse_shape or insert_slice)
/// reads from the view of its result: step's inverse.
View stepBack(Operation *op, const View &out) {
  View in{out.root, out.offset, {}};
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    in.strides.resize(out.strides.size());
    for (auto [i, from] : llvm::enumerate(transpose.getPermutation()))
      in.strides[from] = out.strides[i];
    return in;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    in.strides = splitStrides(collapse.getSrcType().getShape(),
                              collapse.getReassociationIndices(), out.strides);
    return in;
  }
  return atOffsets(cast<tensor::InsertSliceOp>(op), out);
}

} // namespace

std::optional<Concatenation> concatenationOf(ArrayRef<Value> results) {
  SmallVector<SmallVector<Operation *>> chains(results.size());
  SmallVector<tensor::InsertSliceOp> inserts;
  for (auto [result, chain] : llvm::zip(results, chains)) {
    tensor::InsertSliceOp insert = insertOf(result, chain);
    if (!insert || llvm::is_contained(inserts, insert))
      return std::nullopt;
    inserts.push_back(insert);
  }
  if (inserts.empty())
    return std::nullopt;
  // The inserts must be one chain, each the destination of the next and
  // read by nothing else, with nothing but the results inserted.
  tensor::InsertSliceOp last = inserts.front();
  while (last.getResult().hasOneUse()) {
    auto next =
        dyn_cast<tensor::InsertSliceOp>(*last.getResult().getUsers().begin());
    if (!next || next.getDest() != last.getResult())
      break;
    last = next;
  }
  SmallVector<Operation *> ops;
  int64_t covered = 0;
  for (tensor::InsertSliceOp insert = last; insert;
       insert = insert.getDest().getDefiningOp<tensor::InsertSliceOp>()) {
    if (!llvm::is_contained(inserts, insert) ||
        (insert != last && !insert.getResult().hasOneUse()))
      return std::nullopt;
    ops.push_back(insert);
    covered += insert.getSourceType().getNumElements();
  }
  if (ops.size() != inserts.size())
    return std::nullopt;
  // Every element written once: the parts' boxes are disjoint and as many
  // elements as the whole.
  Value whole = last.getResult();
  if (covered != cast<RankedTensorType>(whole.getType()).getNumElements())
    return std::nullopt;
  for (auto [i, a] : llvm::enumerate(inserts))
    for (tensor::InsertSliceOp b : ArrayRef(inserts).drop_front(i + 1)) {
      bool apart = false;
      for (auto [aOffset, aSize, bOffset, bSize] :
           llvm::zip(a.getStaticOffsets(), a.getSourceType().getShape(),
                     b.getStaticOffsets(), b.getSourceType().getShape()))
        apart |= aOffset + aSize <= bOffset || bOffset + bSize <= aOffset;
      if (!apart)
        return std::nullopt;
    }
  Concatenation concatenation{whole, {}, ops};
  for (auto [insert, chain] : llvm::zip(inserts, chains)) {
    View view = stepBack(insert, denseView(whole));
    for (Operation *op : llvm::reverse(chain))
      view = stepBack(op, view);
    concatenation.views.push_back(view);
    concatenation.ops.append(chain.rbegin(), chain.rend());
  }
  return concatenation;
}

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
  auto groupStride = [&](ArrayRef<int64_t> strides, int64_t from, int64_t to) {
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
