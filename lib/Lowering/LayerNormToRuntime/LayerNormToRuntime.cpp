//===- LayerNormToRuntime.cpp - lmc.layer_norm as runtime calls -----------===//
//
// runtime/kernels/layer_norm.cpp computes a layer normalization and its
// gradient a row at a time; each op becomes one call on dense buffers:
// its operands' (`bufferization.to_buffer`, read only) and fresh ones for
// its results (`memref.alloc`, back to tensors with `to_tensor restrict`).
// Run where lmc-attention-to-runtime runs, after the last CSE (which would
// merge the forward's and the backward's reads of one tensor into the
// first, whose buffer bufferization may then reuse before the second
// call).
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/RuntimeCalls.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace lmc {
#define GEN_PASS_DEF_LMCLAYERNORMTORUNTIME
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Replaces `op` by a call of `callee` with the pointers of `operands` (a
/// null value, an optional operand the op does not have: a null pointer),
/// its results' (fresh buffers), the rows and the row width of the first
/// operand (x), and `scalar` if given.
void lowerToCall(Operation *op, StringRef callee, ArrayRef<Value> operands,
                 std::optional<float> scalar) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Value> args;
  for (Value operand : operands)
    args.push_back(readOnlyPointer(b, loc, operand));
  SmallVector<Value> buffers;
  for (Value result : op->getResults()) {
    buffers.push_back(
        memref::AllocOp::create(b, loc, denseBufferType(result.getType())));
    args.push_back(bufferPointer(b, loc, buffers.back()));
  }
  SmallVector<Type> argTypes(args.size(), ptr);
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(operands.front().getType()).getShape();
  int64_t C = shape.back(), rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  for (int64_t size : {rows, C}) {
    args.push_back(arith::ConstantIntOp::create(b, loc, size, 64));
    argTypes.push_back(b.getI64Type());
  }
  if (scalar) {
    args.push_back(
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(*scalar)));
    argTypes.push_back(b.getF32Type());
  }
  func::CallOp::create(b, loc,
                       declareRuntimeFunction(op->getParentOfType<ModuleOp>(),
                                              b, callee,
                                              b.getFunctionType(argTypes, {})),
                       args);
  for (auto [result, buffer] : llvm::zip(op->getResults(), buffers))
    result.replaceAllUsesWith(bufferization::ToTensorOp::create(
        b, loc, result.getType(), buffer, /*restrict=*/true,
        /*writable=*/true));
  op->erase();
}

struct LayerNormToRuntimePass
    : public impl::LmcLayerNormToRuntimeBase<LayerNormToRuntimePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<LayerNormOp, LayerNormGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto type = cast<RankedTensorType>(op->getOperand(0).getType());
      if (!type.getElementType().isF32()) {
        op->emitError("lmc runs '") << op->getName() << "' on f32 only";
        return signalPassFailure();
      }
      if (auto norm = dyn_cast<LayerNormOp>(op)) {
        lowerToCall(op, "lmc_rt_layer_norm_f32",
                    {norm.getX(), norm.getScale(), norm.getBias()},
                    norm.getEpsilon().convertToFloat());
      } else {
        auto grad = cast<LayerNormGradOp>(op);
        lowerToCall(op, "lmc_rt_layer_norm_grad_f32",
                    {grad.getX(), grad.getScale(), grad.getStats(),
                     grad.getDy(), grad.getAccumulate()},
                    std::nullopt);
      }
    }
  }
};

} // namespace
} // namespace lmc
