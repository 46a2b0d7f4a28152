//===- LmcOpsAttention.td - fused masked attention ----------*- tablegen -*-===//
//
// Included from LmcOps.td: attention as one op (lmc-fuse-attention makes it
// from the matmul / scale / mask / softmax / matmul chain an exported GPT
// has), so that the runtime computes it in blocks of queries without the
// [B, H, T, S] scores and skips the keys a causal mask hides.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_DIALECT_LMC_IR_LMCOPSATTENTION_TD
#define LMC_DIALECT_LMC_IR_LMCOPSATTENTION_TD

def Lmc_AttentionOp : Lmc_Op<"attention", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "masked scaled dot-product attention";
  let description = [{
    For each batch index (all dimensions before the last two):
    `out = softmax(select(mask, -inf, scale * (q kt))) v` along the keys,
    where `q` is `[.., T, D]`, `kt` the keys transposed `[.., D, S]`, `v`
    `[.., S, Dv]` and `mask` `[1, .., 1, T, S]` (true: masked), shared by
    every batch index. `stats` holds each query row's softmax maximum and
    sum of exponentials (`[.., T, 2]`), from which the gradient recomputes
    the probabilities. The optional `exps` (`[.., T, S]`) keeps the
    exponentials themselves, e^(score - max), for the gradient to read
    instead (memory for time: lmc-fuse-attention's `keep-exponentials`);
    only the keys that some row of each block of 64 query rows sees are
    written (the rest is never read). A row with every key masked is NaN,
    as the unfused softmax makes it.

    Example:

    ```mlir
    %o, %s = lmc.attention %q, %kt, %v, %mask {scale = 0.125 : f32} : tensor<2x4x64x32xf32>, tensor<2x4x32x64xf32>, tensor<2x4x64x32xf32>, tensor<1x1x64x64xi1> -> tensor<2x4x64x32xf32>, tensor<2x4x64x2xf32>
    %o2, %s2, %e = lmc.attention %q, %kt, %v, %mask {scale = 0.125 : f32} : tensor<2x4x64x32xf32>, tensor<2x4x32x64xf32>, tensor<2x4x64x32xf32>, tensor<1x1x64x64xi1> -> tensor<2x4x64x32xf32>, tensor<2x4x64x2xf32>, tensor<2x4x64x64xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$q, Lmc_FloatTensor:$kt,
                       Lmc_FloatTensor:$v, Lmc_BoolTensor:$mask, F32Attr:$scale);
  let results = (outs Lmc_FloatTensor:$out, Lmc_FloatTensor:$stats,
                      Optional<Lmc_FloatTensor>:$exps);
  let assemblyFormat =
      "$q `,` $kt `,` $v `,` $mask attr-dict `:` type($q) `,` type($kt) `,` type($v) `,` type($mask) `->` type($out) `,` type($stats) (`,` type($exps)^)?";
  let hasVerifier = 1;
}

def Lmc_AttentionGradOp : Lmc_Op<"attention_grad", [Pure,
    AllTypesMatch<["q", "dq"]>, AllTypesMatch<["kt", "dkt"]>,
    AllTypesMatch<["v", "dv"]>, AllTypesMatch<["out", "dout"]>]> {
  let summary = "gradient of lmc.attention w.r.t. q, kt and v";
  let description = [{
    From `lmc.attention`'s operands, results and the cotangent `dout` of
    `out`: the cotangents of `q`, `kt` and `v`, the probabilities
    recomputed from `stats` block by block, or read from the forward's
    `exps` when given (the same values, bit for bit).

    Example:

    ```mlir
    %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %mask, %o, %s, %do {scale = 0.125 : f32} : tensor<2x4x64x32xf32>, tensor<2x4x32x64xf32>, tensor<2x4x64x32xf32>, tensor<1x1x64x64xi1>, tensor<2x4x64x32xf32>, tensor<2x4x64x2xf32>, tensor<2x4x64x32xf32>
    %dq2, %dkt2, %dv2 = lmc.attention_grad %q, %kt, %v, %mask, %o2, %s2, %do exponentials %e {scale = 0.125 : f32} : tensor<2x4x64x32xf32>, tensor<2x4x32x64xf32>, tensor<2x4x64x32xf32>, tensor<1x1x64x64xi1>, tensor<2x4x64x32xf32>, tensor<2x4x64x2xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x64xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$q, Lmc_FloatTensor:$kt,
                       Lmc_FloatTensor:$v, Lmc_BoolTensor:$mask,
                       Lmc_FloatTensor:$out, Lmc_FloatTensor:$stats,
                       Lmc_FloatTensor:$dout, Optional<Lmc_FloatTensor>:$exps,
                       F32Attr:$scale);
  let results = (outs Lmc_FloatTensor:$dq, Lmc_FloatTensor:$dkt,
                      Lmc_FloatTensor:$dv);
  let assemblyFormat =
      "$q `,` $kt `,` $v `,` $mask `,` $out `,` $stats `,` $dout (`exponentials` $exps^)? attr-dict `:` type($q) `,` type($kt) `,` type($v) `,` type($mask) `,` type($out) `,` type($stats) `,` type($dout) (`,` type($exps)^)?";
  let hasVerifier = 1;
}

#endif // LMC_DIALECT_LMC_IR_LMCOPSATTENTION_TD
