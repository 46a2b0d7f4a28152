//===- Passes.td - lmc conversion passes --------------------*- tablegen -*-===//

#ifndef LMC_CONVERSION_PASSES_TD
#define LMC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLmcToLinalg : Pass<"convert-lmc-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lowers lmc ops to linalg, tensor, arith and math on tensors";
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def LmcMatmulToRuntime : Pass<"lmc-matmul-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Replaces buffer-level matmuls with calls to the runtime's BLAS";
  let description = [{
    After bufferization, rewrites `linalg.matmul` and `linalg.batch_matmul`
    (optionally fed by `linalg.transpose` of a whole operand) on dense
    identity-layout memrefs into calls to `lmc_rt_matmul_f32` /
    `lmc_rt_matmul_f64` (runtime/kernels), which accumulate into the output
    like the linalg ops do.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::index::IndexDialect"];
}

#endif // LMC_CONVERSION_PASSES_TD
