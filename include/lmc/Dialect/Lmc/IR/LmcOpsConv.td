//===- LmcOpsConv.td - convolution and pooling ops ---------*- tablegen -*-===//
//
// Included from LmcOps.td: N-D convolution (NC + spatial layout, OIHW-style
// weights) with its two adjoints, and max pooling with its adjoint. Average
// pooling, global pooling and batch normalization are built from these and
// the elementwise/reduction ops by the importer.
//
// Common geometry: for spatial dimension `i` with input size `I`, kernel
// size `K`, stride `s`, dilation `d` and paddings `lo`/`hi`, the output size
// is `(I + lo + hi - d * (K - 1) - 1) / s + 1` (rounded down) and output
// position `o` reads padded positions `o * s + k * d`, k in [0, K).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_DIALECT_LMC_IR_LMCOPSCONV_TD
#define LMC_DIALECT_LMC_IR_LMCOPSCONV_TD

class Lmc_ConvLikeOp<string mnemonic, list<Trait> traits = []>
    : Lmc_Op<mnemonic, !listconcat([Pure], traits)> {
  let hasVerifier = 1;
}

def Lmc_ConvOp : Lmc_ConvLikeOp<"conv",
    [DeclareOpInterfaceMethods<DifferentiableOpInterface>,
     DeclareOpInterfaceMethods<PrecisionPolicyOpInterface,
                               ["allowsLowPrecisionInputs"]>]> {
  let summary = "grouped, strided, dilated, zero-padded convolution";
  let description = [{
    ONNX `Conv` without bias on an `[N, C, spatial...]` input and an
    `[F, C / groups, kernel...]` weight (1 to 3 spatial dimensions):

    `result[n, f, o...] = sum_{c, k...} input_padded[n, g * C/groups + c,
    o * stride + k * dilation] * weight[f, c, k...]` with
    `g = f / (F / groups)`; the input is padded with zeros by `pad_low` /
    `pad_high` per spatial dimension. The result type is checked against the
    geometry. The VJPs are `lmc.conv_input_grad` (input) and
    `lmc.conv_weight_grad` (weight).

    Example:

    ```mlir
    %y = lmc.conv %x, %w, strides = [2, 2], dilations = [1, 1],
           pad_low = [1, 1], pad_high = [1, 1], groups = 1
           : tensor<4x3x8x8xf32>, tensor<16x3x3x3xf32> -> tensor<4x16x4x4xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$input, Lmc_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                       I64Attr:$groups);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` `strides` `=` $strides `,` `dilations` `=`
    $dilations `,` `pad_low` `=` $pad_low `,` `pad_high` `=` $pad_high `,`
    `groups` `=` $groups attr-dict `:` type($input) `,` type($weight) `->`
    type($result)
  }];
}

def Lmc_ConvInputGradOp : Lmc_ConvLikeOp<"conv_input_grad",
    [DeclareOpInterfaceMethods<DifferentiableOpInterface>,
     DeclareOpInterfaceMethods<PrecisionPolicyOpInterface,
                               ["allowsLowPrecisionInputs"]>]> {
  let summary = "the adjoint of a convolution with respect to its input";
  let description = [{
    Given the cotangent `grad` of an `lmc.conv` result and the weight, the
    cotangent of the convolution's input (of the result type): every output
    position sends `grad * weight` back to the input positions it read;
    padding positions are dropped. The attributes are the convolution's.
    Linear in both operands: its VJP is `lmc.conv` (for `grad`) and
    `lmc.conv_weight_grad` (for `weight`).

    Example:

    ```mlir
    %dx = lmc.conv_input_grad %g, %w, strides = [2, 2], dilations = [1, 1],
            pad_low = [1, 1], pad_high = [1, 1], groups = 1
            : tensor<4x16x4x4xf32>, tensor<16x3x3x3xf32> -> tensor<4x3x8x8xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$grad, Lmc_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                       I64Attr:$groups);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $weight `,` `strides` `=` $strides `,` `dilations` `=`
    $dilations `,` `pad_low` `=` $pad_low `,` `pad_high` `=` $pad_high `,`
    `groups` `=` $groups attr-dict `:` type($grad) `,` type($weight) `->`
    type($result)
  }];
}

def Lmc_ConvWeightGradOp : Lmc_ConvLikeOp<"conv_weight_grad",
    [DeclareOpInterfaceMethods<DifferentiableOpInterface>,
     DeclareOpInterfaceMethods<PrecisionPolicyOpInterface,
                               ["allowsLowPrecisionInputs"]>]> {
  let summary = "the adjoint of a convolution with respect to its weight";
  let description = [{
    Given the convolution's input and the cotangent `grad` of its result,
    the cotangent of the weight (of the result type):
    `result[f, c, k...] = sum_{n, o...} grad[n, f, o...] *
    input_padded[n, g * C/groups + c, o * stride + k * dilation]`.
    Linear in both operands: its VJP is `lmc.conv_input_grad` (for `input`)
    and `lmc.conv` (for `grad`).

    Example:

    ```mlir
    %dw = lmc.conv_weight_grad %x, %g, strides = [2, 2], dilations = [1, 1],
            pad_low = [1, 1], pad_high = [1, 1], groups = 1
            : tensor<4x3x8x8xf32>, tensor<4x16x4x4xf32> -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$input, Lmc_FloatTensor:$grad,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                       I64Attr:$groups);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `,` `strides` `=` $strides `,` `dilations` `=`
    $dilations `,` `pad_low` `=` $pad_low `,` `pad_high` `=` $pad_high `,`
    `groups` `=` $groups attr-dict `:` type($input) `,` type($grad) `->`
    type($result)
  }];
}

def Lmc_MaxPoolOp : Lmc_ConvLikeOp<"max_pool",
    [DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "max pooling over spatial windows";
  let description = [{
    `result[n, c, o...] = max_{k...} input_padded[n, c, o * stride +
    k * dilation]` over a window of size `kernel`, on an `[N, C,
    spatial...]` input padded with -inf (1 to 3 spatial dimensions). Each
    window must contain at least one input element. NaN propagates.

    The VJP (`lmc.max_pool_grad`) routes each output's cotangent to the
    first position (in row-major window order) that attains the window's
    maximum, as PyTorch's `max_pool` does; overlapping windows accumulate.

    Example:

    ```mlir
    %y = lmc.max_pool %x, kernel = [2, 2], strides = [2, 2],
           dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0]
           : tensor<4x8x8x8xf32> -> tensor<4x8x4x4xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` `kernel` `=` $kernel `,` `strides` `=` $strides `,`
    `dilations` `=` $dilations `,` `pad_low` `=` $pad_low `,` `pad_high` `=`
    $pad_high attr-dict `:` type($input) `->` type($result)
  }];
}

def Lmc_MaxPoolGradOp : Lmc_ConvLikeOp<"max_pool_grad"> {
  let summary = "the adjoint of max pooling";
  let description = [{
    Given the pooling's input and the cotangent `grad` of its result, a
    tensor of the input's type where each output's cotangent is added at the
    first position of its window that attains the maximum. The attributes
    are the pooling's. Not differentiated itself.

    Example:

    ```mlir
    %dx = lmc.max_pool_grad %x, %g, kernel = [2, 2], strides = [2, 2],
            dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0]
            : tensor<4x8x8x8xf32>, tensor<4x8x4x4xf32> -> tensor<4x8x8x8xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$input, Lmc_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `,` `kernel` `=` $kernel `,` `strides` `=` $strides `,`
    `dilations` `=` $dilations `,` `pad_low` `=` $pad_low `,` `pad_high` `=`
    $pad_high attr-dict `:` type($input) `,` type($grad) `->` type($result)
  }];
}

#endif // LMC_DIALECT_LMC_IR_LMCOPSCONV_TD
