//===- LmcOpsLayerNorm.td - layer normalization as one op ---*- tablegen -*-===//
//
// Included from LmcOps.td: layer normalization over the last dimension as
// one op (lmc-fuse-layer-norm makes it from the reductions and elementwise
// ops an ONNX LayerNormalization is imported as), so that the runtime
// computes it, and its gradient, row by row in one pass instead of the
// decomposition's six or seven loop nests.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_DIALECT_LMC_IR_LMCOPSLAYERNORM_TD
#define LMC_DIALECT_LMC_IR_LMCOPSLAYERNORM_TD

def Lmc_LayerNormOp : Lmc_Op<"layer_norm", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    For each row of `x` (`[.., C]`): `y = (x - mean) * rstd * scale + bias`
    with `mean` the row's mean and `rstd = 1 / sqrt(var + epsilon)`, `var`
    the mean of the squared differences from the mean (biased), as ONNX's
    LayerNormalization over the last axis. `scale` and `bias` are `[C]`.
    `stats` (`[.., 2]`) holds each row's mean and rstd, which the gradient
    reads.

    Example:

    ```mlir
    %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<8x16x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>, tensor<8x16x2xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$x, Lmc_FloatTensor:$scale,
                       Lmc_FloatTensor:$bias, F32Attr:$epsilon);
  let results = (outs Lmc_FloatTensor:$y, Lmc_FloatTensor:$stats);
  let assemblyFormat =
      "$x `,` $scale `,` $bias attr-dict `:` type($x) `,` type($scale) `,` type($bias) `->` type($y) `,` type($stats)";
  let hasVerifier = 1;
}

def Lmc_LayerNormGradOp : Lmc_Op<"layer_norm_grad", [Pure,
    AllTypesMatch<["x", "dx", "dy"]>, AllTypesMatch<["scale", "dscale", "dbias"]>]> {
  let summary = "gradient of lmc.layer_norm w.r.t. x, scale and bias";
  let description = [{
    From `lmc.layer_norm`'s input, scale, row statistics and the cotangent
    `dy` of `y`: the cotangents of `x`, `scale` and `bias`. With
    `accumulate`, `dx` is that plus the cotangent (the input's other
    readers' share: a residual stream's), added as the row is written
    (canonicalization folds such an `lmc.add` in).

    Example:

    ```mlir
    %dx, %dg, %db = lmc.layer_norm_grad %x, %g, %s, %dy : tensor<8x16x32xf32>, tensor<32xf32>, tensor<8x16x2xf32>, tensor<8x16x32xf32>
    %dx2, %dg2, %db2 = lmc.layer_norm_grad %x, %g, %s, %dy accumulate %r : tensor<8x16x32xf32>, tensor<32xf32>, tensor<8x16x2xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$x, Lmc_FloatTensor:$scale,
                       Lmc_FloatTensor:$stats, Lmc_FloatTensor:$dy,
                       Optional<Lmc_FloatTensor>:$accumulate);
  let results = (outs Lmc_FloatTensor:$dx, Lmc_FloatTensor:$dscale,
                      Lmc_FloatTensor:$dbias);
  let assemblyFormat =
      "$x `,` $scale `,` $stats `,` $dy (`accumulate` $accumulate^)? attr-dict `:` type($x) `,` type($scale) `,` type($stats) `,` type($dy) (`,` type($accumulate)^)?";
  let hasVerifier = 1;
}

#endif // LMC_DIALECT_LMC_IR_LMCOPSLAYERNORM_TD
