//===- LmcOps.td - lmc op definitions -----------------------*- tablegen -*-===//

#ifndef LMC_DIALECT_LMC_IR_LMCOPS_TD
#define LMC_DIALECT_LMC_IR_LMCOPS_TD

include "lmc/Dialect/Lmc/IR/LmcDialect.td"
include "lmc/Dialect/Lmc/IR/LmcEnums.td"
include "lmc/Dialect/Lmc/IR/LmcInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Lmc_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Lmc_IndexTensor : RankedTensorOf<[I32, I64]>;
def Lmc_BoolTensor : RankedTensorOf<[I1]>;
def Lmc_AnyTensor : RankedTensorOf<[AnyFloat, I1, I32, I64]>;
def Lmc_NumericTensor : RankedTensorOf<[AnyFloat, I32, I64]>;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Lmc_UnaryOp<string mnemonic, string desc,
                  Type tensor = Lmc_FloatTensor>
    : Lmc_Op<mnemonic, [Pure, SameOperandsAndResultType,
                        DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "elementwise " # mnemonic;
  let description = desc # [{

    Example:

    ```mlir
    %y = lmc.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensor:$operand);
  let results = (outs tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

// Neg, Abs, Add, Sub, Mul, Max and Min also take signed integers (wrapping
// on overflow): index arithmetic that an export computes at run time, such
// as position ids from a padding mask or a sliding window's distances.
// Integer values carry no gradient.
def Lmc_NegOp : Lmc_UnaryOp<"neg", "Computes `-x`.", Lmc_NumericTensor>;
def Lmc_ReluOp : Lmc_UnaryOp<"relu", "Computes `max(x, 0)`.">;
def Lmc_SigmoidOp : Lmc_UnaryOp<"sigmoid", "Computes `1 / (1 + exp(-x))`.">;
def Lmc_TanhOp : Lmc_UnaryOp<"tanh", "Computes `tanh(x)`.">;
def Lmc_ExpOp : Lmc_UnaryOp<"exp", "Computes `exp(x)`.">;
def Lmc_LogOp : Lmc_UnaryOp<"log", "Computes the natural logarithm.">;
def Lmc_SqrtOp : Lmc_UnaryOp<"sqrt", "Computes the square root.">;
def Lmc_AbsOp : Lmc_UnaryOp<"abs", [{Computes `|x|`. The VJP uses `sign(x)`
  (0 at 0).}], Lmc_NumericTensor>;
def Lmc_ErfOp : Lmc_UnaryOp<"erf", [{Computes the Gauss error function;
  its derivative is `2 / sqrt(pi) * exp(-x^2)`.}]>;
def Lmc_SinOp : Lmc_UnaryOp<"sin", "Computes `sin(x)` (radians).">;
def Lmc_CosOp : Lmc_UnaryOp<"cos", "Computes `cos(x)` (radians).">;
def Lmc_AtanOp : Lmc_UnaryOp<"atan", [{Computes `atan(x)`; its derivative
  is `1 / (1 + x^2)`.}]>;
def Lmc_FloorOp : Lmc_UnaryOp<"floor", [{Rounds down to an integral value;
  the VJP is zero (the derivative almost everywhere).}]>;
def Lmc_CeilOp : Lmc_UnaryOp<"ceil", [{Rounds up to an integral value; the
  VJP is zero.}]>;
def Lmc_RoundOp : Lmc_UnaryOp<"round", [{Rounds to the nearest integral
  value, halves to even (ONNX Round); the VJP is zero.}]>;

class Lmc_BinaryOp<string mnemonic, string desc,
                   Type tensor = Lmc_FloatTensor>
    : Lmc_Op<mnemonic, [Pure, SameOperandsAndResultType,
                        DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "elementwise " # mnemonic;
  let description = desc # [{ Operands have the result's shape; use
    `lmc.broadcast_in_dim` to broadcast.

    Example:

    ```mlir
    %z = lmc.}] # mnemonic # [{ %x, %y : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensor:$lhs, tensor:$rhs);
  let results = (outs tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Lmc_AddOp : Lmc_BinaryOp<"add", "Computes `lhs + rhs`.",
                             Lmc_NumericTensor> {
  let hasCanonicalizer = 1;
}
def Lmc_SubOp : Lmc_BinaryOp<"sub", "Computes `lhs - rhs`.",
                             Lmc_NumericTensor>;
def Lmc_MulOp : Lmc_BinaryOp<"mul", "Computes `lhs * rhs`.",
                             Lmc_NumericTensor>;
def Lmc_DivOp : Lmc_BinaryOp<"div", [{Computes `lhs / rhs`. On signed
  integers (index arithmetic an export computes at run time; no gradient)
  the quotient truncates toward zero, as C and ONNX's integer Div do, and
  `min / -1` wraps to `min`. A zero divisor ends a CPU run naming the op's
  ONNX node (`lmc-to-linalg{check-indices}`, as PyTorch raises
  ZeroDivisionError); a GPU kernel, which cannot call the host, gives 0.}],
  Lmc_NumericTensor>;
def Lmc_PowOp : Lmc_BinaryOp<"pow", "Computes `lhs ^ rhs`.">;
def Lmc_MaxOp : Lmc_BinaryOp<"max", [{Computes `max(lhs, rhs)` (NaN
  propagating). The cotangent goes to the larger operand; on ties each
  operand gets half of it, as in PyTorch's `torch.maximum`.}],
  Lmc_NumericTensor>;
def Lmc_MinOp : Lmc_BinaryOp<"min", [{Computes `min(lhs, rhs)` (NaN
  propagating). The cotangent goes to the smaller operand; on ties each
  operand gets half of it.}], Lmc_NumericTensor>;

def Lmc_CmpOp : Lmc_Op<"cmp", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison";
  let description = [{
    Compares two float or integer tensors of the same type elementwise.
    `predicate` is one of `eq`, `ne`, `lt`, `le`, `gt`, `ge`
    (`lmc::CmpPredicate`: ordered comparisons for floats except `ne`,
    which is true when either side is NaN, as IEEE `!=`; signed for
    integers). Not differentiable: the result is boolean.

    Example:

    ```mlir
    %m = lmc.cmp gt, %x, %zero : tensor<4xf32> -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Lmc_CmpPredicate:$predicate, Lmc_NumericTensor:$lhs,
                       Lmc_NumericTensor:$rhs);
  let results = (outs Lmc_BoolTensor:$result);
  let assemblyFormat =
      "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Lmc_SelectOp : Lmc_Op<"select", [Pure,
    AllTypesMatch<["on_true", "on_false", "result"]>,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "elementwise choice between two tensors";
  let description = [{
    `result[i] = condition[i] ? on_true[i] : on_false[i]`; all operands have
    the result's shape.

    Example:

    ```mlir
    %y = lmc.select %m, %x, %zero : tensor<4xi1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Lmc_BoolTensor:$condition, Lmc_AnyTensor:$on_true,
                       Lmc_AnyTensor:$on_false);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat =
      "$condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def Lmc_BroadcastInDimOp : Lmc_Op<"broadcast_in_dim", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "broadcasts a tensor to a larger shape";
  let description = [{
    Operand dimension `i` becomes result dimension `dims[i]` (strictly
    increasing); it must have size 1 or the result's size there. Result
    dimensions not named in `dims` are new. Any element type (boolean masks
    are broadcast too); only float operands are differentiable.

    Example:

    ```mlir
    %b = lmc.broadcast_in_dim %bias, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lmc_AnyTensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat =
      "$operand `,` `dims` `=` $dims attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Lmc_ReshapeOp : Lmc_Op<"reshape", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "reinterprets a tensor with another shape";
  let description = [{
    Row-major reshape of a tensor of any element type; element counts must
    agree.

    Example:

    ```mlir
    %r = lmc.reshape %x : tensor<4x2x3xf32> -> tensor<4x6xf32>
    ```
  }];
  let arguments = (ins Lmc_AnyTensor:$operand);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Lmc_TransposeOp : Lmc_Op<"transpose", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "permutes dimensions";
  let description = [{
    `result.shape[i] = operand.shape[perm[i]]`.

    Example:

    ```mlir
    %t = lmc.transpose %x, perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Lmc_AnyTensor:$operand, DenseI64ArrayAttr:$perm);
  let results = (outs Lmc_AnyTensor:$result);
  let assemblyFormat =
      "$operand `,` `perm` `=` $perm attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

def Lmc_ReduceSumOp : Lmc_Op<"reduce_sum", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "sums over a set of dimensions";
  let description = [{
    Sums `operand` over `axes` (sorted, unique). With `keep_dims` the reduced
    dimensions stay with size 1, otherwise they are dropped.

    Example:

    ```mlir
    %s = lmc.reduce_sum %x, axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$operand, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keep_dims);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat =
      "$operand `,` `axes` `=` $axes attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
}

def Lmc_MatmulOp : Lmc_Op<"matmul", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>,
    DeclareOpInterfaceMethods<PrecisionPolicyOpInterface,
                              ["allowsLowPrecisionInputs"]>]> {
  let summary = "batched matrix product";
  let description = [{
    `result[..., m, n] = sum_k op(lhs)[..., m, k] * op(rhs)[..., k, n]` where
    `op` transposes the last two dimensions when `transpose_lhs` /
    `transpose_rhs` is set. Both operands have the result's batch dimensions
    (broadcast beforehand).

    Example:

    ```mlir
    %c = lmc.matmul %a, %b {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$lhs, Lmc_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Normalized exponentials and losses
//===----------------------------------------------------------------------===//

class Lmc_SoftmaxLikeOp<string mnemonic, string desc>
    : Lmc_Op<mnemonic, [Pure, SameOperandsAndResultType,
                        DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = desc;
  let description = [{
    Computes }] # desc # [{ along `axis`, subtracting the maximum first for
    numerical stability.

    Example:

    ```mlir
    %p = lmc.}] # mnemonic # [{ %x, axis = 1 : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$operand, I64Attr:$axis);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = "$operand `,` `axis` `=` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Lmc_SoftmaxOp : Lmc_SoftmaxLikeOp<"softmax", "softmax">;
def Lmc_LogSoftmaxOp : Lmc_SoftmaxLikeOp<"log_softmax", "log-softmax">;

def Lmc_SoftmaxCrossEntropyOp : Lmc_Op<"softmax_cross_entropy", [Pure,
    DeclareOpInterfaceMethods<DifferentiableOpInterface>]> {
  let summary = "mean softmax cross-entropy of logits against class indices";
  let description = [{
    `logits` is `[N, C]`, `labels` is `[N]` with values in `[0, C)`; the
    result is the scalar `mean_n(logsumexp(logits[n]) - logits[n, labels[n]])`,
    as PyTorch's `nn.CrossEntropyLoss` computes it. With `ignore_index`
    (PyTorch's `ignore_index`, -100 in every Hugging Face model), rows
    whose label equals it count neither in the sum nor in the mean's
    divisor, `max(counted rows, 1)`: a batch with none counted has loss 0
    (PyTorch's mean would be 0/0, NaN).

    Example:

    ```mlir
    %l = lmc.softmax_cross_entropy %logits, %labels ignore_index = -100 : tensor<32x10xf32>, tensor<32xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$logits, Lmc_IndexTensor:$labels,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels (`ignore_index` `=` $ignore_index^)? attr-dict `:`
    type($logits) `,` type($labels) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$logits,
                   "::mlir::Value":$labels), [{
      build($_builder, $_state, result, logits, labels, ::mlir::IntegerAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def Lmc_SoftmaxCrossEntropyGradOp : Lmc_Op<"softmax_cross_entropy_grad", [Pure,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "gradient of lmc.softmax_cross_entropy w.r.t. the logits";
  let description = [{
    `result[n, c] = (softmax(logits[n])[c] - (c == labels[n])) * cotangent / N`
    where `cotangent` is the scalar cotangent of the loss; with
    `ignore_index`, 0 on the rows whose label equals it and the other rows
    divided by `max(counted rows, 1)` instead of N.

    Example:

    ```mlir
    %g = lmc.softmax_cross_entropy_grad %logits, %labels, %dl : tensor<32x10xf32>, tensor<32xi64>, tensor<f32>
    ```
  }];
  let arguments = (ins Lmc_FloatTensor:$logits, Lmc_IndexTensor:$labels,
                       Lmc_FloatTensor:$cotangent,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Lmc_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $cotangent (`ignore_index` `=` $ignore_index^)?
    attr-dict `:` type($logits) `,` type($labels) `,` type($cotangent)
  }];
  let hasVerifier = 1;
}

include "lmc/Dialect/Lmc/IR/LmcOpsExtra.td"
include "lmc/Dialect/Lmc/IR/LmcOpsConv.td"
include "lmc/Dialect/Lmc/IR/LmcOpsAttention.td"
include "lmc/Dialect/Lmc/IR/LmcOpsLayerNorm.td"

#endif // LMC_DIALECT_LMC_IR_LMCOPS_TD
