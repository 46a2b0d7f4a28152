//===- AttentionToRuntime.cpp - lmc.attention as runtime calls ------------===//
//
// The blocked computation (runtime/kernels/attention.cpp) has no linalg
// form worth having: each op becomes one call on buffers — the operands'
// own buffers read in place (identity layout; bufferization copies a view
// first), the results in fresh buffers the arena plan places.
//
// Run right before one-shot bufferization, after the last CSE: a
// `bufferization.to_buffer` is pure, and CSE would merge the forward's and
// the backward's reads of one tensor into the first, whose buffer the
// bufferization may reuse before the backward's call reads it (the
// analysis sees the read at the to_buffer, not at the call).
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "../Common/RuntimeCalls.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

namespace lmc {
#define GEN_PASS_DEF_LMCATTENTIONTORUNTIME
#include "lmc/Conversion/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

constexpr llvm::StringLiteral kForward = "lmc_rt_attention_f32";
constexpr llvm::StringLiteral kBackward = "lmc_rt_attention_grad_f32";

MemRefType bufferType(Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// Builds the call: `inputs` read in place, one fresh buffer per result
/// type, then the sizes; returns the results as tensors.
SmallVector<Value> callRuntime(OpBuilder &b, Operation *op, StringRef callee,
                               ValueRange inputs, TypeRange resultTypes,
                               ArrayRef<int64_t> sizes, float scale) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Value> args;
  SmallVector<Type> argTypes;
  for (Value input : inputs) {
    Value buffer = bufferization::ToBufferOp::create(
        b, loc, bufferType(input.getType()), input,
        /*read_only=*/true);
    args.push_back(bufferPointer(b, loc, buffer));
    argTypes.push_back(ptr);
  }
  SmallVector<Value> buffers;
  for (Type type : resultTypes) {
    buffers.push_back(memref::AllocOp::create(b, loc, bufferType(type)));
    args.push_back(bufferPointer(b, loc, buffers.back()));
    argTypes.push_back(ptr);
  }
  for (int64_t size : sizes) {
    args.push_back(arith::ConstantIntOp::create(b, loc, size, 64));
    argTypes.push_back(b.getI64Type());
  }
  args.push_back(arith::ConstantOp::create(b, loc,
                                           b.getF32FloatAttr(scale)));
  argTypes.push_back(b.getF32Type());
  auto module = op->getParentOfType<ModuleOp>();
  func::CallOp::create(
      b, loc,
      declareRuntimeFunction(module, b, callee,
                             b.getFunctionType(argTypes, {})),
      args);
  SmallVector<Value> results;
  for (auto [buffer, type] : llvm::zip(buffers, resultTypes))
    results.push_back(bufferization::ToTensorOp::create(
        b, loc, type, buffer, /*restrict=*/true, /*writable=*/true));
  return results;
}

/// pairs (the batch dimensions' product), T, S, D, Dv.
SmallVector<int64_t> sizesOf(Value q, Value v) {
  ArrayRef<int64_t> qShape = cast<RankedTensorType>(q.getType()).getShape();
  ArrayRef<int64_t> vShape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t pairs = 1;
  for (int64_t d : qShape.drop_back(2))
    pairs *= d;
  return {pairs, qShape[qShape.size() - 2], vShape[vShape.size() - 2],
          qShape.back(), vShape.back()};
}

void lower(AttentionOp op) {
  OpBuilder b(op);
  op->replaceAllUsesWith(callRuntime(
      b, op, kForward, {op.getQ(), op.getKt(), op.getV(), op.getMask()},
      op->getResultTypes(), sizesOf(op.getQ(), op.getV()),
      op.getScale().convertToFloat()));
}

void lower(AttentionGradOp op) {
  OpBuilder b(op);
  op->replaceAllUsesWith(callRuntime(
      b, op, kBackward,
      {op.getQ(), op.getKt(), op.getV(), op.getMask(), op.getOut(),
       op.getStats(), op.getDout()},
      op->getResultTypes(), sizesOf(op.getQ(), op.getV()),
      op.getScale().convertToFloat()));
}

struct AttentionToRuntime
    : public impl::LmcAttentionToRuntimeBase<AttentionToRuntime> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto type = cast<RankedTensorType>(op->getOperand(0).getType());
      if (!type.getElementType().isF32()) {
        op->emitError("lmc runs '") << op->getName() << "' on f32 only";
        return signalPassFailure();
      }
      if (auto attention = dyn_cast<AttentionOp>(op))
        lower(attention);
      else
        lower(cast<AttentionGradOp>(op));
      op->erase();
    }
  }
};

} // namespace
} // namespace lmc
