//===- AttentionToRuntime.cpp - lmc.attention as runtime calls ------------===//
//
// The blocked computation (runtime/kernels/attention.cpp) has no linalg
// form worth having: each op becomes one call on buffers. An operand is
// read where the dense tensor it is a view of lies (a GPT's heads are
// transposed slices of its fused q/k/v projection: the kernel reads them
// there, and the transposes, no longer read, go); results that are
// concatenated (its dq, dk and dv, into the gradient of that projection)
// are written where the concatenation puts them when the kernel writes
// them there in place (writtenInPlace), and any other result that
// a transpose reads is written in the transpose's order into a fresh
// buffer the arena plan places. The call gets each matrix's strides in a
// constant table (lmc_rt_attention_layout, OperandViews.h). An operand no
// view reaches is its own dense buffer (bufferization copies a view
// first).
//
// Run right before one-shot bufferization, after the last CSE: a
// `bufferization.to_buffer` is pure, and CSE would merge the forward's and
// the backward's reads of one tensor into the first, whose buffer the
// bufferization may reuse before the backward's call reads it (the
// analysis sees the read at the to_buffer, not at the call).
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/RuntimeCalls.h"
#include "OperandViews.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/runtime/kernels.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace lmc {
#define GEN_PASS_DEF_LMCATTENTIONTORUNTIME
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

using attention::MatrixLayout;
using attention::View;

constexpr llvm::StringLiteral kForward = "lmc_rt_attention_f32";
constexpr llvm::StringLiteral kBackward = "lmc_rt_attention_grad_f32";

/// The layout table's matrices, in lmc_rt_attention_layout's order.
enum Matrix { Q, Kt, V, Out, Dout, Dq, Dkt, Dv, kMatrices };

/// Whether the kernel can take matrix `m` laid out by `view` (its last
/// two dimensions the matrix): rows of contiguous elements, or for the
/// transposed keys contiguous rows either way.
bool kernelReads(Matrix m, const View &view) {
  int64_t rank = int64_t(view.strides.size());
  bool rowsDense = view.strides[rank - 1] == 1;
  return rowsDense || ((m == Kt || m == Dkt) && view.strides[rank - 2] == 1);
}

/// Whether the kernel writes result `m` laid out by `view` in place, as
/// runtime/kernels/attention.cpp decides: rows dense, or spread over at
/// most LMC_RT_ATTENTION_IN_PLACE_SPAN bytes (else it computes the matrix
/// dense and copies it out, which costs more than the copy into a
/// concatenation it would replace: GPT-2 124M's dq, dk, dv at 256 tokens,
/// rows 2304 floats apart).
bool writtenInPlace(Matrix m, const View &view, ArrayRef<int64_t> shape) {
  int64_t rank = int64_t(shape.size());
  int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  int64_t rowStride = view.strides[rank - 2],
          colStride = view.strides[rank - 1];
  if ((m == Kt || m == Dkt) && rowStride == 1) { // stored as the keys
    std::swap(rows, cols);
    rowStride = colStride;
  }
  return rowStride == cols || rows * rowStride * int64_t(sizeof(float)) <=
                                  LMC_RT_ATTENTION_IN_PLACE_SPAN;
}

/// A result's buffer and where the result's elements lie in it.
struct ResultBuffer {
  Value buffer;
  View view;
  linalg::TransposeOp reorderedFor; // the transpose it replaces, if any
};

ResultBuffer denseResult(OpBuilder &b, Location loc, Value result) {
  return {memref::AllocOp::create(b, loc, denseBufferType(result.getType())),
          attention::denseView(result), nullptr};
}

/// The transpose that reads `result` when it is the one reader besides
/// attention_grad ops.
linalg::TransposeOp soleTranspose(Value result) {
  linalg::TransposeOp transpose;
  for (Operation *user : result.getUsers()) {
    if (isa<AttentionGradOp>(user))
      continue;
    auto t = dyn_cast<linalg::TransposeOp>(user);
    if (!t || transpose || !t.hasPureTensorSemantics() ||
        t.getInput() != result)
      return nullptr;
    transpose = t;
  }
  return transpose;
}

/// `result`'s buffer: dense in the order of the transpose that reads it
/// (soleTranspose), else dense in its own.
ResultBuffer resultBuffer(OpBuilder &b, Location loc, Value result) {
  linalg::TransposeOp transpose = soleTranspose(result);
  if (!transpose)
    return denseResult(b, loc, result);
  Type type = transpose.getResult()[0].getType();
  Value buffer = memref::AllocOp::create(b, loc, denseBufferType(type));
  SmallVector<int64_t> dense =
      attention::denseStrides(denseBufferType(type).getShape());
  SmallVector<int64_t> strides(dense.size());
  for (auto [i, from] : llvm::enumerate(transpose.getPermutation()))
    strides[from] = dense[i];
  return {buffer, View{result, 0, strides}, transpose};
}

/// The constant table lmc_rt_attention_layout, as a private global of the
/// module, and its address.
Value layoutTable(OpBuilder &b, Location loc, ModuleOp module,
                  const int64_t pairs[2],
                  ArrayRef<std::optional<MatrixLayout>> matrices) {
  SmallVector<int64_t> values{pairs[0], pairs[1]};
  for (const std::optional<MatrixLayout> &m : matrices) {
    MatrixLayout l = m.value_or(MatrixLayout{0, {0, 0}, 0, 0});
    values.append({l.offset, l.pair[0], l.pair[1], l.row, l.col});
  }
  return constantTable(b, loc, module, "__lmc_attention_layout", values);
}

/// The inputs of a call in the callee's order: a matrix of the layout
/// table, or a dense operand (the mask, the stats, the exponentials); a
/// null value is an optional operand the op does not have (a null
/// pointer).
using CallInputs = ArrayRef<std::pair<Value, std::optional<Matrix>>>;

/// One lmc.attention or lmc.attention_grad as a call, step by step: where
/// its input matrices lie, the buffers its results go to, the layout table
/// of both, the call, then its results as tensors.
class CallLowering {
public:
  CallLowering(Operation *op, CallInputs inputs,
               ArrayRef<Matrix> resultMatrices)
      : op(op), b(op), loc(op->getLoc()), inputs(inputs),
        resultMatrices(resultMatrices),
        matrixResults(op->getResults().take_front(resultMatrices.size())) {
    for (auto [value, m] : inputs)
      if (m) {
        matrices.push_back(value);
        inputMatrices.push_back(*m);
      }
  }

  /// Where each input matrix lies: the view of a dense tensor where the
  /// kernel can read it, its own dense buffer otherwise.
  void placeInputs() {
    for (auto [value, m] : llvm::zip(matrices, inputMatrices)) {
      SmallVector<Operation *> chain;
      View view = attention::viewOf(value, &chain);
      if (!kernelReads(m, view)) {
        view = attention::denseView(value);
        chain.clear();
      }
      views.push_back(view);
      chains.push_back(chain);
    }
  }

  /// The results' buffers: the concatenation they are written into, when
  /// the kernel writes each in place there; else one per result, in the
  /// order of the transpose that reads it where the kernel can write that.
  void placeResults() {
    concatenation = attention::concatenationOf(matrixResults);
    if (concatenation &&
        !llvm::all_of(
            llvm::zip(resultMatrices, matrixResults, concatenation->views),
            [](auto mrv) {
              auto [m, result, view] = mrv;
              return kernelReads(m, view) &&
                     writtenInPlace(
                         m, view,
                         cast<RankedTensorType>(result.getType()).getShape());
            }))
      concatenation.reset();
    if (concatenation) { // one buffer, the whole concatenation's
      Value buffer = memref::AllocOp::create(
          b, loc, denseBufferType(concatenation->whole.getType()));
      for (const View &view : concatenation->views)
        results.push_back({buffer, view, nullptr});
      return;
    }
    for (auto [result, m] : llvm::zip(matrixResults, resultMatrices)) {
      ResultBuffer r = resultBuffer(b, loc, result);
      if (!kernelReads(m, r.view)) {
        r.buffer.getDefiningOp()->erase();
        r = denseResult(b, loc, result);
      }
      results.push_back(r);
    }
  }

  /// The layout table's rows for the matrices placed so far, and in
  /// `pairs` the batch dimensions' sizes; where some view's batch strides
  /// do not nest, every matrix is made dense first.
  SmallVector<std::optional<MatrixLayout>> matrixLayouts(int64_t pairs[2]) {
    ArrayRef<int64_t> batchShape = queryShape().drop_back(2);
    std::optional<SmallVector<MatrixLayout>> layouts =
        attention::pairLayouts(batchShape, allViews(), pairs);
    if (!layouts) {
      makeDense();
      layouts = attention::pairLayouts(batchShape, allViews(), pairs);
    }
    SmallVector<std::optional<MatrixLayout>> table(kMatrices);
    SmallVector<Matrix> order(inputMatrices);
    order.append(resultMatrices.begin(), resultMatrices.end());
    for (auto [m, layout] : llvm::zip(order, *layouts))
      table[m] = layout;
    return table;
  }

  /// The call: input pointers (roots, read only), result pointers (the
  /// matrices, then the dense extras: the stats, the exponentials),
  /// `nullResults` null pointers (optional results the op does not have),
  /// the layout table, the sizes and the scale.
  void emitCall(ModuleOp module, StringRef callee, unsigned nullResults,
                float scale) {
    int64_t pairs[2];
    SmallVector<std::optional<MatrixLayout>> table = matrixLayouts(pairs);
    Type ptr = LLVM::LLVMPointerType::get(b.getContext());
    SmallVector<Value> args;
    SmallVector<Type> argTypes;
    auto addPointer = [&](Value pointer) {
      args.push_back(pointer);
      argTypes.push_back(ptr);
    };
    for (size_t i = 0, next = 0; i < inputs.size(); ++i)
      addPointer(readOnlyPointer(
          b, loc, inputs[i].second ? views[next++].root : inputs[i].first));
    for (Value result : op->getResults().drop_front(resultMatrices.size()))
      extraResults.push_back(
          memref::AllocOp::create(b, loc, denseBufferType(result.getType())));
    for (const ResultBuffer &r : results)
      addPointer(bufferPointer(b, loc, r.buffer));
    for (Value buffer : extraResults)
      addPointer(bufferPointer(b, loc, buffer));
    for (unsigned i = 0; i < nullResults; ++i)
      addPointer(readOnlyPointer(b, loc, Value()));
    addPointer(layoutTable(b, loc, module, pairs, table));
    ArrayRef<int64_t> qShape = queryShape();
    ArrayRef<int64_t> vShape =
        cast<RankedTensorType>(op->getOperand(2).getType()).getShape();
    for (int64_t size : {qShape[qShape.size() - 2], vShape[vShape.size() - 2],
                         qShape.back(), vShape.back()}) {
      args.push_back(arith::ConstantIntOp::create(b, loc, size, 64));
      argTypes.push_back(b.getI64Type());
    }
    args.push_back(arith::ConstantOp::create(b, loc, b.getF32FloatAttr(scale)));
    argTypes.push_back(b.getF32Type());
    func::CallOp::create(
        b, loc,
        declareRuntimeFunction(module, b, callee,
                               b.getFunctionType(argTypes, {})),
        args);
  }

  /// The results as tensors: a concatenation's buffer replaces the
  /// concatenation; a reordered result replaces its transpose, and the
  /// gradient ops that read it read it through the inverse transpose
  /// (which their own lowering looks through).
  void replaceResults() {
    if (concatenation) {
      concatenation->whole.replaceAllUsesWith(bufferization::ToTensorOp::create(
          b, loc, concatenation->whole.getType(), results.front().buffer,
          /*restrict=*/true, /*writable=*/true));
      for (Operation *written : concatenation->ops)
        written->erase();
    } else {
      for (auto [result, r] : llvm::zip(op->getResults(), results))
        replaceResult(result, r);
    }
    for (auto [result, buffer] : llvm::zip(
             op->getResults().drop_front(resultMatrices.size()), extraResults))
      result.replaceAllUsesWith(bufferization::ToTensorOp::create(
          b, loc, result.getType(), buffer, /*restrict=*/true,
          /*writable=*/true));
  }

  /// The ops the inputs were read through (transposes, reshapes, slices).
  ArrayRef<SmallVector<Operation *>> lookedThrough() const { return chains; }

private:
  ArrayRef<int64_t> queryShape() const {
    return cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  }

  SmallVector<View> allViews() const {
    SmallVector<View> all(views);
    for (const ResultBuffer &r : results)
      all.push_back(r.view);
    return all;
  }

  /// Every input and result its own dense buffer.
  void makeDense() {
    for (auto [value, view, chain] : llvm::zip(matrices, views, chains)) {
      view = attention::denseView(value);
      chain.clear();
    }
    llvm::SmallPtrSet<Operation *, 4> allocs;
    for (const ResultBuffer &r : results)
      allocs.insert(r.buffer.getDefiningOp());
    for (Operation *alloc : allocs)
      alloc->erase();
    concatenation.reset();
    for (auto [result, r] : llvm::zip(op->getResults(), results))
      r = denseResult(b, loc, result);
  }

  void replaceResult(Value result, ResultBuffer r) {
    if (!r.reorderedFor) {
      result.replaceAllUsesWith(bufferization::ToTensorOp::create(
          b, loc, result.getType(), r.buffer, /*restrict=*/true,
          /*writable=*/true));
      return;
    }
    Value reordered = bufferization::ToTensorOp::create(
        b, loc, r.reorderedFor.getResult()[0].getType(), r.buffer,
        /*restrict=*/true, /*writable=*/true);
    SmallVector<int64_t> inverse(r.reorderedFor.getPermutation().size());
    for (auto [i, from] : llvm::enumerate(r.reorderedFor.getPermutation()))
      inverse[from] = int64_t(i);
    r.reorderedFor.getResult()[0].replaceAllUsesWith(reordered);
    r.reorderedFor.erase();
    if (result.use_empty())
      return;
    auto type = cast<RankedTensorType>(result.getType());
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    Value back = linalg::TransposeOp::create(b, loc, reordered, init, inverse)
                     .getResult()[0];
    result.replaceAllUsesWith(back);
  }

  Operation *op;
  OpBuilder b;
  Location loc;
  CallInputs inputs;
  ArrayRef<Matrix> resultMatrices;
  SmallVector<Value> matrixResults;
  /// The inputs that are matrices, and which.
  SmallVector<Value> matrices;
  SmallVector<Matrix> inputMatrices;
  /// Per input matrix: where it lies, and the ops read through to get there.
  SmallVector<View> views;
  SmallVector<SmallVector<Operation *>> chains;
  std::optional<attention::Concatenation> concatenation;
  SmallVector<ResultBuffer> results;
  SmallVector<Value> extraResults;
};

struct Lowering {
  ModuleOp module;
  /// Transposes, reshapes and slices the calls read through: erased when
  /// nothing else reads them.
  SmallVector<Operation *> lookedThrough;

  /// Lowers `op` (lmc.attention or lmc.attention_grad) to a call of
  /// `callee` with `inputs` in the callee's order, then the results (the
  /// first `resultMatrices.size()` matrices, the rest dense: the stats, the
  /// exponentials) and `nullResults` null pointers (an optional result the
  /// op does not have), the table, the sizes and the scale.
  void lower(Operation *op, StringRef callee, CallInputs inputs,
             ArrayRef<Matrix> resultMatrices, unsigned nullResults,
             float scale) {
    CallLowering call(op, inputs, resultMatrices);
    call.placeInputs();
    call.placeResults();
    call.emitCall(module, callee, nullResults, scale);
    call.replaceResults();
    for (const SmallVector<Operation *> &chain : call.lookedThrough())
      lookedThrough.append(chain.begin(), chain.end());
  }

  /// Erases the looked-through ops nothing reads any more (users first).
  void eraseUnread() {
    bool erased = true;
    llvm::SmallPtrSet<Operation *, 16> gone;
    while (erased) {
      erased = false;
      for (Operation *op : lookedThrough)
        if (!gone.contains(op) && op->use_empty()) {
          gone.insert(op);
          op->erase();
          erased = true;
        }
    }
  }
};

struct AttentionToRuntimePass
    : public impl::LmcAttentionToRuntimeBase<AttentionToRuntimePass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    Lowering lowering{getOperation(), {}};
    // In order: a forward's reordered result reaches its gradient op as a
    // transpose that the gradient's lowering then looks through.
    for (Operation *op : ops) {
      auto type = cast<RankedTensorType>(op->getOperand(0).getType());
      if (!type.getElementType().isF32()) {
        op->emitError("lmc runs '") << op->getName() << "' on f32 only";
        return signalPassFailure();
      }
      constexpr std::optional<Matrix> dense = std::nullopt;
      if (auto forward = dyn_cast<AttentionOp>(op)) {
        lowering.lower(op, kForward,
                       {{forward.getQ(), Q},
                        {forward.getKt(), Kt},
                        {forward.getV(), V},
                        {forward.getMask(), dense}},
                       {Out}, forward.getExps() ? 0 : 1,
                       forward.getScale().convertToFloat());
      } else {
        auto grad = cast<AttentionGradOp>(op);
        lowering.lower(op, kBackward,
                       {{grad.getQ(), Q},
                        {grad.getKt(), Kt},
                        {grad.getV(), V},
                        {grad.getMask(), dense},
                        {grad.getOut(), Out},
                        {grad.getStats(), dense},
                        {grad.getExps(), dense},
                        {grad.getDout(), Dout}},
                       {Dq, Dkt, Dv}, 0, grad.getScale().convertToFloat());
      }
      op->erase();
    }
    lowering.eraseUnread();
  }
};

} // namespace
} // namespace lmc
