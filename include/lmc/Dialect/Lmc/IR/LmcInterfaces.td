//===- LmcInterfaces.td - autodiff and precision interfaces -*- tablegen -*-===//

#ifndef LMC_DIALECT_LMC_IR_LMCINTERFACES_TD
#define LMC_DIALECT_LMC_IR_LMCINTERFACES_TD

include "mlir/IR/OpBase.td"

def DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::lmc";
  let description = [{
    An op that can build its vector-Jacobian product out of lmc ops. The
    autodiff pass calls `buildVjp` once per op on the path from a trainable
    parameter to the loss, in reverse topological order.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the cotangents of the operands from the cotangent of each
        result (a null Value when a result received none). Fills
        `operandCotangents` with one entry per operand; entries for operands
        that are not differentiable, or for which `needed` is false, may be
        null.
      }],
      "::llvm::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultCotangents,
           "::llvm::ArrayRef<bool>":$needed,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>,
  ];
}

def PrecisionPolicyOpInterface : OpInterface<"PrecisionPolicyOpInterface"> {
  let cppNamespace = "::lmc";
  let description = [{
    The mixed-precision policy of an op: compute-bound ops (matmul, conv)
    may take low-precision (bf16/f16) inputs and accumulate in f32;
    everything else stays f32.
  }];
  let methods = [
    InterfaceMethod<"Whether the op may run with low-precision inputs.",
      "bool", "allowsLowPrecisionInputs", (ins),
      /*methodBody=*/"", /*defaultImplementation=*/"return false;">,
  ];
}

#endif // LMC_DIALECT_LMC_IR_LMCINTERFACES_TD
