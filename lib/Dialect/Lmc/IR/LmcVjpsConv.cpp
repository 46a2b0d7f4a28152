//===- LmcVjpsConv.cpp - VJPs of the convolution and pooling ops ----------===//
//
// Like LmcVjps.cpp: each VJP is written in lmc ops; `g` is the result
// cotangent. The convolution and its two adjoints are bilinear and close
// under differentiation: each one's VJP is built from the other two.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;
using namespace lmc;

// y = conv(x, w): dx = conv_input_grad(g, w), dw = conv_weight_grad(x, g).
LogicalResult ConvOp::buildVjp(OpBuilder &b, ValueRange cts,
                               ArrayRef<bool> needed,
                               SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  if (needed[0])
    out[0] = ConvInputGradOp::create(
        b, getLoc(), getInput().getType(), g, getWeight(), getStrides(),
        getDilations(), getPadLow(), getPadHigh(), getGroups());
  if (needed[1])
    out[1] = ConvWeightGradOp::create(
        b, getLoc(), getWeight().getType(), getInput(), g, getStrides(),
        getDilations(), getPadLow(), getPadHigh(), getGroups());
  return success();
}

// dx = conv_input_grad(gy, w) is <conv(dx', w), gy>-adjoint:
// d gy = conv(g, w), d w = conv_weight_grad(g, gy).
LogicalResult ConvInputGradOp::buildVjp(OpBuilder &b, ValueRange cts,
                                        ArrayRef<bool> needed,
                                        SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  if (needed[0])
    out[0] = ConvOp::create(b, getLoc(), getGrad().getType(), g, getWeight(),
                            getStrides(), getDilations(), getPadLow(),
                            getPadHigh(), getGroups());
  if (needed[1])
    out[1] = ConvWeightGradOp::create(
        b, getLoc(), getWeight().getType(), g, getGrad(), getStrides(),
        getDilations(), getPadLow(), getPadHigh(), getGroups());
  return success();
}

// dw = conv_weight_grad(x, gy): d x = conv_input_grad(gy, g),
// d gy = conv(x, g).
LogicalResult ConvWeightGradOp::buildVjp(OpBuilder &b, ValueRange cts,
                                         ArrayRef<bool> needed,
                                         SmallVectorImpl<Value> &out) {
  Value g = takeSingleCotangent(*this, cts, out);
  if (!g)
    return success();
  if (needed[0])
    out[0] = ConvInputGradOp::create(
        b, getLoc(), getInput().getType(), getGrad(), g, getStrides(),
        getDilations(), getPadLow(), getPadHigh(), getGroups());
  if (needed[1])
    out[1] = ConvOp::create(b, getLoc(), getGrad().getType(), getInput(), g,
                            getStrides(), getDilations(), getPadLow(),
                            getPadHigh(), getGroups());
  return success();
}

LogicalResult MaxPoolOp::buildVjp(OpBuilder &b, ValueRange cts, ArrayRef<bool>,
                                  SmallVectorImpl<Value> &out) {
  if (Value g = takeSingleCotangent(*this, cts, out))
    out[0] = MaxPoolGradOp::create(b, getLoc(), getInput().getType(),
                                   getInput(), g, getKernel(), getStrides(),
                                   getDilations(), getPadLow(), getPadHigh());
  return success();
}
