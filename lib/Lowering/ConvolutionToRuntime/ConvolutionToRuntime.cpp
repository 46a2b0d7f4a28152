//===- ConvolutionToRuntime.cpp - f32 convolutions as runtime calls -------===//
//
// runtime/kernels/convolution.cpp runs a convolution and its two adjoints
// as GEMMs over gathered windows, at the GEMM's rate; the loop nests
// convert-lmc-to-linalg would make of them run at about 1 GFLOP/s. Each
// op with an f32 result becomes one call on dense f32 buffers (bf16/f16
// operands widened first), its geometry a constant lmc_rt_conv_geometry
// table. Run where lmc-layer-norm-to-runtime runs,
// after the last CSE.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/RuntimeCalls.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace lmc {
#define GEN_PASS_DEF_LMCCONVOLUTIONTORUNTIME
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {

bool isRuntimeConvolution(Operation *op) {
  if (!isa<ConvOp, ConvInputGradOp, ConvWeightGradOp>(op))
    return false;
  auto elementOf = [](Type type) {
    return cast<RankedTensorType>(type).getElementType();
  };
  return llvm::all_of(op->getOperandTypes(),
                      [&](Type type) {
                        Type element = elementOf(type);
                        return element.isF32() || element.isBF16() ||
                               element.isF16();
                      }) &&
         elementOf(op->getResult(0).getType()).isF32();
}

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The lmc_rt_conv_geometry of a convolution whose input is [N, C, in...],
/// weight [F, C / groups, k...] and output [N, F, out...], window
/// attributes from `op`.
template <typename OpTy>
SmallVector<int64_t> geometryOf(OpTy op, ArrayRef<int64_t> input,
                                ArrayRef<int64_t> weight,
                                ArrayRef<int64_t> output) {
  SmallVector<int64_t> table{input[0], input[1], weight[0],
                             static_cast<int64_t>(op.getGroups())};
  const size_t spatial = input.size() - 2, unused = 3 - spatial;
  // Per field, three entries: `unused` leading ones of `fill`, then the
  // spatial dimensions' values.
  auto append = [&](int64_t fill, auto valueAt) {
    table.append(unused, fill);
    for (size_t i = 0; i < spatial; ++i)
      table.push_back(valueAt(i));
  };
  append(1, [&](size_t i) { return input[2 + i]; });
  append(1, [&](size_t i) { return weight[2 + i]; });
  append(1, [&](size_t i) { return output[2 + i]; });
  append(1, [&](size_t i) { return op.getStrides()[i]; });
  append(1, [&](size_t i) { return op.getDilations()[i]; });
  append(0, [&](size_t i) { return op.getPadLow()[i]; });
  return table;
}

/// `v` in f32: itself, or a bf16/f16 tensor widened (exactly) by an
/// elementwise linalg.generic. Products of two widened values are exact
/// in f32, so the kernels sum the same products as the loop nests of a
/// mixed-precision convolution (docs/mixed-precision.md).
Value widened(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType().isF32())
    return v;
  auto wide = RankedTensorType::get(type.getShape(), b.getF32Type());
  Value init =
      tensor::EmptyOp::create(b, loc, wide.getShape(), wide.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, wide, v, init, {identity, identity},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [](OpBuilder &nested, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nested, l,
                   arith::ExtFOp::create(nested, l, nested.getF32Type(),
                                         args[0])
                       .getResult());
             })
      .getResult(0);
}

/// Replaces `op` by a call of `callee` on the buffers of `operands`, a
/// fresh buffer for its result, and the geometry table.
void lowerToCall(Operation *op, StringRef callee, ValueRange operands,
                 ArrayRef<int64_t> geometry) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto module = op->getParentOfType<ModuleOp>();
  SmallVector<Value> args;
  for (Value operand : operands)
    args.push_back(readOnlyPointer(b, loc, widened(b, loc, operand)));
  Value result = op->getResult(0);
  Value buffer =
      memref::AllocOp::create(b, loc, denseBufferType(result.getType()));
  args.push_back(bufferPointer(b, loc, buffer));
  args.push_back(
      constantTable(b, loc, module, "__lmc_conv_geometry", geometry));
  SmallVector<Type> argTypes(args.size(), ptr);
  func::CallOp::create(b, loc,
                       declareRuntimeFunction(module, b, callee,
                                              b.getFunctionType(argTypes, {})),
                       args);
  result.replaceAllUsesWith(bufferization::ToTensorOp::create(
      b, loc, result.getType(), buffer, /*restrict=*/true,
      /*writable=*/true));
  op->erase();
}

struct ConvolutionToRuntimePass
    : public impl::LmcConvolutionToRuntimeBase<ConvolutionToRuntimePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isRuntimeConvolution(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto conv = dyn_cast<ConvOp>(op)) {
        lowerToCall(op, "lmc_rt_conv_f32", {conv.getInput(), conv.getWeight()},
                    geometryOf(conv, shapeOf(conv.getInput()),
                               shapeOf(conv.getWeight()),
                               shapeOf(conv.getResult())));
      } else if (auto dx = dyn_cast<ConvInputGradOp>(op)) {
        lowerToCall(op, "lmc_rt_conv_input_grad_f32",
                    {dx.getGrad(), dx.getWeight()},
                    geometryOf(dx, shapeOf(dx.getResult()),
                               shapeOf(dx.getWeight()), shapeOf(dx.getGrad())));
      } else {
        auto dw = cast<ConvWeightGradOp>(op);
        lowerToCall(op, "lmc_rt_conv_weight_grad_f32",
                    {dw.getInput(), dw.getGrad()},
                    geometryOf(dw, shapeOf(dw.getInput()),
                               shapeOf(dw.getResult()), shapeOf(dw.getGrad())));
      }
    }
  }
};

} // namespace
} // namespace lmc
