//===- LmcOpsExtra.td - logical, cast, slicing, gather ops --*- tablegen -*-===//
//
// Included from LmcOps.td: boolean logic, element type conversion,
// concatenation and strided slicing, max/min reductions, gather and its
// adjoint scatter-add.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_DIALECT_LMC_IR_LMCOPSEXTRA_TD
#define LMC_DIALECT_LMC_IR_LMCOPSEXTRA_TD

//===----------------------------------------------------------------------===//
// Boolean logic (not differentiable)
//===----------------------------------------------------------------------===//

def Lmc_NotOp : Lmc_Op<"not", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise logical negation";
  let description = [{
    Negates a boolean tensor. Not differentiable.

    Example:

    ```mlir
    %n = lmc.not %m : tensor<4xi1>
    ```
  }];
  let arguments = (ins Lmc_BoolTensor:$operand);
  let results = (outs Lmc_BoolTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

class Lmc_LogicalOp<string mnemonic, string desc>
    : Lmc_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise logical " # mnemonic;
  let description = desc # [{ Operands have the result's shape. Not
    differentiable.

    Example:

    ```mlir
    %m = lmc.}] # mnemonic # [{ %a, %b : tensor<4xi1>
    ```
  }];
  let arguments = (ins Lmc_BoolTensor:$lhs, Lmc_BoolTensor:$rhs);
  let results = (outs Lmc_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Lmc_AndOp : Lmc_LogicalOp<"and", "Computes `lhs && rhs`.">;
def Lmc_OrOp : Lmc_LogicalOp<"or", "Computes `lhs || rhs`.">;

//===----------------------------------------------------------------------===//
// Training / evaluation mode
//===----------------------------------------------------------------------===//

def Lmc_ModeSelectOp : Lmc_Op<"mode_select", [Pure,
    AllTypesMatch<["train", "eval", "result"]>,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "a value that differs between training and evaluation";
  let description = [{
    `train` in a training step (what `@forward_grad`, `@grad_step` and
    `@train_step` compute), `eval` in an evaluation step (`@eval_step`):
    BatchNormalization uses the batch's statistics in one and the running
    statistics in the other, as `model.train()` / `model.eval()` do in
    PyTorch. `lmc-optimizer` replaces each op by the operand of its entry
    point; a remaining one (a function differentiated directly, as
    `lmc-gradcheck` does) lowers to `train`. The cotangent flows to `train`
    only.

    Example:

    ```mlir
    %y = lmc.mode_select train(%batch_stats) eval(%running_stats) : tensor<4xf32>
    ```
  }];
  let arguments = (ins Lmc_AnyTensor:$train, Lmc_AnyTensor:$eval);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat =
      "`train` `(` $train `)` `eval` `(` $eval `)` attr-dict `:` type($result)";
}

def Lmc_RandomUniformOp : Lmc_Op<"random_uniform", [Pure]> {
  let summary = "counter-based pseudo-random numbers in [0, 1)";
  let description = [{
    Element `i` (row-major) of the result is a function of the i64 `key`,
    the `stream` attribute and `i` alone (splitmix64, Steele et al. 2014):

        mix(x)  = x ^= x >> 30; x *= 0xBF58476D1CE4E5B9;
                  x ^= x >> 27; x *= 0x94D049BB133111EB; x ^ (x >> 31)
        base    = mix(key * 0x9E3779B97F4A7C15 + stream)
        bits_i  = mix(base + i * 0x9E3779B97F4A7C15)   (wrapping u64)
        u_i     = (bits_i >> 40) * 2^-24               (f32; f64: >> 11, 2^-53)

    so the same key gives the same numbers on every machine and thread
    count. Dropout in training mode compares them with its ratio; the
    runtime supplies a fresh key for every micro-batch (`rng_key`). Not
    differentiable (nothing to differentiate: the key is an integer).

    Example:

    ```mlir
    %u = lmc.random_uniform %key, stream = 3 : tensor<i64> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$key, I64Attr:$stream);
  let results = (outs RankedTensorOf<[F32, F64]>:$result);
  let assemblyFormat =
      "$key `,` `stream` `=` $stream attr-dict `:` type($key) `->` type($result)";
}

def Lmc_OptimizationBarrierOp : Lmc_Op<"optimization_barrier",
    [AllTypesMatch<["operand", "result"]>]> {
  let summary = "the operand, kept apart from equal computations";
  let description = [{
    Returns its operand. It is not `Pure`, so CSE neither merges it nor the
    ops computing from its result with equal ops computing from the
    operand: lmc-rematerialize feeds the forward values it recomputes in the
    backward pass through barriers, which would otherwise be folded back
    into the forward values they replace (as `jax.lax.optimization_barrier`
    does for `jax.checkpoint`). Lowering keeps it through fusion and CSE and
    lmc-drop-optimization-barriers removes it before bufferization. Not
    differentiable: it is inserted after autodiff.

    Example:

    ```mlir
    %h = lmc.optimization_barrier %x : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Element type conversion
//===----------------------------------------------------------------------===//

def Lmc_ConvertOp : Lmc_Op<"convert", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "converts the element type";
  let description = [{
    Converts each element to the result's element type: float to float
    (rounding to nearest), signed integer or boolean to float, float to
    signed integer (rounding toward zero), integer to integer (sign
    extension or truncation). Shapes are equal. Differentiable only from a
    float to a float type (the cotangent is converted back); integer and
    boolean operands get no gradient.

    Example:

    ```mlir
    %y = lmc.convert %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Lmc_AnyTensor:$operand);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Concatenation and slicing
//===----------------------------------------------------------------------===//

def Lmc_ConcatOp : Lmc_Op<"concat", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "concatenates tensors along an axis";
  let description = [{
    Concatenates one or more tensors of equal rank and element type along
    `axis`; the other dimensions agree. The VJP slices the cotangent back
    into pieces (float tensors; integer and boolean ones carry no gradient).

    Example:

    ```mlir
    %c = lmc.concat axis = 1, %a, %b : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<2x7xf32>
    ```
  }];
  let arguments = (ins I64Attr:$axis, Variadic<Lmc_AnyTensor>:$inputs);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat =
      "`axis` `=` $axis `,` $inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Lmc_SliceOp : Lmc_Op<"slice", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "strided slice with static bounds";
  let description = [{
    `result[i0, ..., in] = operand[start[0] + i0 * stride[0], ...]`; the
    result type gives the number of elements taken along each dimension.
    Strides are non-zero and may be negative (reversal); every index read
    lies inside the operand. The VJP is `lmc.slice_grad` of the cotangent.

    Example:

    ```mlir
    %s = lmc.slice %x, start = [0, 7], stride = [1, -2] : tensor<4x8xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Lmc_AnyTensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$stride);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start `,` `stride` `=` $stride attr-dict `:`
    type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Lmc_SliceGradOp : Lmc_Op<"slice_grad", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "places a strided slice into a zero tensor";
  let description = [{
    The adjoint of `lmc.slice`: a zero tensor of the result type with
    `result[start[0] + i0 * stride[0], ...] = source[i0, ...]`. Its own VJP
    is `lmc.slice` of the cotangent.

    Example:

    ```mlir
    %g = lmc.slice_grad %s, start = [0, 7], stride = [1, -2] : tensor<4x4xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$source, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$stride);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $source `,` `start` `=` $start `,` `stride` `=` $stride attr-dict `:`
    type($source) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Max / min reductions
//===----------------------------------------------------------------------===//

class Lmc_ReduceExtremumOp<string mnemonic, string which>
    : Lmc_Op<mnemonic, [Pure,
                        DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "takes the " # which # " over a set of dimensions";
  let description = [{
    Takes the }] # which # [{ of `operand` over `axes` (sorted, unique),
    propagating NaN. With `keep_dims` the reduced dimensions stay with size
    1, otherwise they are dropped.

    The VJP routes the cotangent to the positions that attain the extremum;
    when several positions tie, the cotangent is split evenly among them
    (as PyTorch's `amax`/`amin` do).

    Example:

    ```mlir
    %m = lmc.}] # mnemonic # [{ %x, axes = [1] {keep_dims} : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$operand, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keep_dims);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat =
      "$operand `,` `axes` `=` $axes attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Lmc_ReduceMaxOp : Lmc_ReduceExtremumOp<"reduce_max", "maximum">;
def Lmc_ReduceMinOp : Lmc_ReduceExtremumOp<"reduce_min", "minimum">;

def Lmc_CumSumOp : Lmc_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "integer running sum along an axis";
  let description = [{
    ONNX `CumSum` on signed integers (wrapping on overflow):
    `result[..., j, ...] = sum of operand[..., i, ...]` over the `i` along
    `axis` with `i <= j` (`i < j` when `exclusive`; `i >= j`, `i > j` when
    `reverse`). Exports compute position ids this way from a padding mask.
    Float running sums are matmuls by a triangle, which autodiff already
    knows; integers carry no gradient, so this op has no VJP.

    Example:

    ```mlir
    %p = lmc.cumsum %mask, axis = 1 : tensor<4x8xi64>
    ```
  }];
  let arguments = (ins Lmc_IndexTensor:$operand, I64Attr:$axis,
                       UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs Lmc_IndexTensor:$result);
  let assemblyFormat = [{
    $operand `,` `axis` `=` $axis (`exclusive` $exclusive^)?
    (`reverse` $reverse^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gather and scatter-add
//===----------------------------------------------------------------------===//

def Lmc_GatherOp : Lmc_Op<"gather", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "gathers slices of a tensor along an axis";
  let description = [{
    ONNX `Gather`: with `r = rank(indices)`,
    `result[o..., i..., t...] = operand[o..., indices[i...], t...]` where
    `o` ranges over the operand dimensions before `axis` and `t` over those
    after it. Negative indices count from the end; other out-of-range
    indices are clamped. Differentiable in a float `operand` (the VJP is
    `lmc.scatter_add`), not in `indices`. With `padding_index` (PyTorch's
    `nn.Embedding(padding_idx=...)`) the slice at that index of `axis`
    receives no gradient: the VJP multiplies the scattered gradient by a
    mask that is 0 there.

    Example (an embedding lookup):

    ```mlir
    %e = lmc.gather %table, %ids, axis = 0 : tensor<100x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
    ```
  }];
  let arguments = (ins Lmc_AnyTensor:$operand, Lmc_IndexTensor:$indices,
                       I64Attr:$axis, OptionalAttr<I64Attr>:$padding_index);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat = [{
    $operand `,` $indices `,` `axis` `=` $axis
    (`padding_index` `=` $padding_index^)? attr-dict `:` type($operand)
    `,` type($indices) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$operand,
                   "::mlir::Value":$indices, "int64_t":$axis), [{
      build($_builder, $_state, result, operand, indices, axis,
            ::mlir::IntegerAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def Lmc_ScatterAddOp : Lmc_Op<"scatter_add", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "sums slices into a zero tensor at gathered positions";
  let description = [{
    The adjoint of `lmc.gather`: a zero tensor of the result type to which
    `updates[o..., i..., t...]` is added at `[o..., indices[i...], t...]`
    (repeated indices accumulate). Index normalization is the gather's.
    Differentiable in `updates` (the VJP gathers the cotangent).

    Example:

    ```mlir
    %g = lmc.scatter_add %d, %ids, axis = 0 : tensor<4x8x16xf32>, tensor<4x8xi64> -> tensor<100x16xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$updates, Lmc_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $updates `,` $indices `,` `axis` `=` $axis attr-dict `:` type($updates)
    `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // LMC_DIALECT_LMC_IR_LMCOPSEXTRA_TD
