//===- OperandViews.h - attention operands as strided views -----*- C++ -*-===//
//
// lmc-attention-to-runtime hands the attention kernel views instead of
// dense copies: an operand made by transposing, reshaping and slicing a
// dense tensor (a GPT's heads inside its fused q/k/v projection) is read in
// that tensor's buffer with strides, and a result that a transpose reads
// is written in the transpose's order, or straight into the tensor its
// consumers concatenate it into. This is the stride arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_ATTENTIONTORUNTIME_OPERANDVIEWS_H
#define LMC_LIB_LOWERING_ATTENTIONTORUNTIME_OPERANDVIEWS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace lmc::attention {

/// A tensor's elements in the dense row-major buffer of `root`: element
/// (i0, i1, ...) at `offset + i0 * strides[0] + i1 * strides[1] + ...`.
struct View {
  mlir::Value root;
  int64_t offset = 0;
  llvm::SmallVector<int64_t> strides;
};

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> denseStrides(llvm::ArrayRef<int64_t> shape);

/// `value` as its own dense buffer.
View denseView(mlir::Value value);

/// `value` as a view of the dense tensor it is made from through
/// linalg.transpose, tensor.expand_shape, tensor.collapse_shape (of
/// dimensions the view keeps contiguous) and unit-stride
/// tensor.extract_slice; `value` itself, dense, when it is made otherwise.
/// `chain` receives the ops looked through.
View viewOf(mlir::Value value,
            llvm::SmallVectorImpl<mlir::Operation *> *chain = nullptr);

/// Results that tensor.insert_slice ops assemble into the whole of one
/// tensor, each through single-use linalg.transpose and
/// tensor.collapse_shape ops (a GPT's dq, dk and dv, put back into the
/// gradient of its fused q/k/v projection): that tensor, `whole`, and each
/// result as a view of its dense buffer. `ops` are the ops the results are
/// written through, each after its users.
struct Concatenation {
  mlir::Value whole;
  llvm::SmallVector<View> views;
  llvm::SmallVector<mlir::Operation *> ops;
};

/// The concatenation `results` make, or nothing when they are not every
/// part of one.
std::optional<Concatenation>
concatenationOf(llvm::ArrayRef<mlir::Value> results);

/// One matrix of the kernel's layout (lmc_rt_matrix_layout).
struct MatrixLayout {
  int64_t offset, pair[2], row, col;
};

/// The batch dimensions (all but the last two) of every view of a call
/// cut into two groups, the pairs enumerated row-major over (first group,
/// second group), each group one stride per view; with the last two
/// dimensions' strides, each view's MatrixLayout. Fails when no cut makes
/// each group one stride in every view.
std::optional<llvm::SmallVector<MatrixLayout>>
pairLayouts(llvm::ArrayRef<int64_t> batchShape, llvm::ArrayRef<View> views,
            int64_t pairs[2]);

} // namespace lmc::attention

#endif // LMC_LIB_LOWERING_ATTENTIONTORUNTIME_OPERANDVIEWS_H
