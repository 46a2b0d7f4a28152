//===- LmcOpsConv.cpp - verifiers of the convolution and pooling ops ------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;
using namespace lmc;

/// Checks the per-spatial-dimension attributes of a window op with `spatial`
/// spatial dimensions.
static LogicalResult verifyWindow(Operation *op, int64_t spatial,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  ArrayRef<int64_t> padLow,
                                  ArrayRef<int64_t> padHigh) {
  if (spatial < 1 || spatial > 3)
    return op->emitOpError("expected 1 to 3 spatial dimensions, got ")
           << spatial;
  for (ArrayRef<int64_t> list : {strides, dilations, padLow, padHigh})
    if (static_cast<int64_t>(list.size()) != spatial)
      return op->emitOpError("expected strides, dilations, pad_low and "
                             "pad_high with ")
             << spatial << " entries (one per spatial dimension)";
  for (int64_t i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1)
      return op->emitOpError("expected strides and dilations >= 1");
    if (padLow[i] < 0 || padHigh[i] < 0)
      return op->emitOpError("expected non-negative paddings");
  }
  return success();
}

/// The output sizes of windows `kernel` over the spatial part of `input`, or
/// failure when a window does not fit.
static FailureOr<SmallVector<int64_t>>
windowOutputShape(Operation *op, ArrayRef<int64_t> input,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, ArrayRef<int64_t> padLow,
                  ArrayRef<int64_t> padHigh) {
  SmallVector<int64_t> out;
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t extent = dilations[i] * (kernel[i] - 1) + 1;
    int64_t padded = input[i] + padLow[i] + padHigh[i];
    if (kernel[i] < 1 || padded < extent) {
      op->emitOpError("window of extent ")
          << extent << " does not fit padded size " << padded
          << " along spatial dimension " << i;
      return failure();
    }
    out.push_back((padded - extent) / strides[i] + 1);
  }
  return out;
}

/// Verifies input [N, C, s...], weight [F, C/groups, k...], output
/// [N, F, o...] of a convolution.
template <typename OpTy>
static LogicalResult verifyConv(OpTy op, RankedTensorType input,
                                RankedTensorType weight,
                                RankedTensorType output) {
  Operation *o = op.getOperation();
  int64_t rank = input.getRank();
  if (failed(verifyWindow(o, rank - 2, op.getStrides(), op.getDilations(),
                          op.getPadLow(), op.getPadHigh())))
    return failure();
  if (weight.getRank() != rank || output.getRank() != rank)
    return op.emitOpError("expected input, weight and output of equal rank");
  if (failed(verifyProductElementTypes(o)))
    return failure();
  int64_t groups = op.getGroups();
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  if (groups < 1 || channels % groups != 0 || filters % groups != 0)
    return op.emitOpError("expected groups >= 1 dividing the input channels (")
           << channels << ") and the filters (" << filters << ")";
  if (weight.getDimSize(1) * groups != channels)
    return op.emitOpError("expected weight dimension 1 to be ")
           << channels / groups << " (input channels / groups)";
  FailureOr<SmallVector<int64_t>> spatial = windowOutputShape(
      o, input.getShape().drop_front(2), weight.getShape().drop_front(2),
      op.getStrides(), op.getDilations(), op.getPadLow(), op.getPadHigh());
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> expected = {input.getDimSize(0), filters};
  llvm::append_range(expected, *spatial);
  if (output.getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError("expected convolution output shape ")
           << RankedTensorType::get(expected, output.getElementType());
  return success();
}

LogicalResult ConvOp::verify() {
  return verifyConv(*this, tensorType(getInput()), tensorType(getWeight()),
                    tensorType(getResult()));
}

LogicalResult ConvInputGradOp::verify() {
  return verifyConv(*this, tensorType(getResult()), tensorType(getWeight()),
                    tensorType(getGrad()));
}

LogicalResult ConvWeightGradOp::verify() {
  return verifyConv(*this, tensorType(getInput()), tensorType(getResult()),
                    tensorType(getGrad()));
}

bool ConvOp::allowsLowPrecisionInputs() { return true; }
bool ConvInputGradOp::allowsLowPrecisionInputs() { return true; }
bool ConvWeightGradOp::allowsLowPrecisionInputs() { return true; }

template <typename OpTy>
static LogicalResult verifyPool(OpTy op, RankedTensorType input,
                                RankedTensorType output) {
  Operation *o = op.getOperation();
  int64_t rank = input.getRank();
  if (failed(verifyWindow(o, rank - 2, op.getStrides(), op.getDilations(),
                          op.getPadLow(), op.getPadHigh())))
    return failure();
  ArrayRef<int64_t> kernel = op.getKernel();
  if (static_cast<int64_t>(kernel.size()) != rank - 2)
    return op.emitOpError("expected a kernel with ")
           << rank - 2 << " entries (one per spatial dimension)";
  for (auto [i, k] : llvm::enumerate(kernel)) {
    int64_t extent = op.getDilations()[i] * (k - 1) + 1;
    if (op.getPadLow()[i] >= extent || op.getPadHigh()[i] >= extent)
      return op.emitOpError("expected paddings smaller than the window "
                            "extent, so that every window holds an input "
                            "element");
  }
  if (output.getElementType() != input.getElementType())
    return op.emitOpError("expected matching element types");
  FailureOr<SmallVector<int64_t>> spatial = windowOutputShape(
      o, input.getShape().drop_front(2), kernel, op.getStrides(),
      op.getDilations(), op.getPadLow(), op.getPadHigh());
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> expected(input.getShape().take_front(2));
  llvm::append_range(expected, *spatial);
  if (output.getShape() != ArrayRef<int64_t>(expected))
    return op.emitOpError("expected pooling output shape ")
           << RankedTensorType::get(expected, input.getElementType());
  return success();
}

LogicalResult MaxPoolOp::verify() {
  return verifyPool(*this, tensorType(getInput()), tensorType(getResult()));
}

LogicalResult MaxPoolGradOp::verify() {
  if (getInput().getType() != getResult().getType())
    return emitOpError("expected the result type to be the input type");
  return verifyPool(*this, tensorType(getInput()), tensorType(getGrad()));
}
