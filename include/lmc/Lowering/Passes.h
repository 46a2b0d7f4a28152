//===- Passes.h - lmc conversion passes -------------------------*- C++ -*-===//

#ifndef LMC_LOWERING_PASSES_H
#define LMC_LOWERING_PASSES_H

#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace lmc {

/// What lmc-assemble-gpu-kernels leaves in each gpu.binary.
enum class GpuBinaryFormat { Fatbin, Ptx };

#define GEN_PASS_DECL
#include "lmc/Lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lmc/Lowering/Passes.h.inc"

/// Patterns lowering every lmc op to linalg/tensor/arith/math on tensors
/// (scatter-add to scf loops, concat to slice copies and slices to
/// tensor.extract_slice unless `shardable`; with `checkIndices`, a gather's
/// out-of-range index calls lmc_rt_index_out_of_range instead of being
/// clamped).
void populateLmcToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                 bool shardable = false,
                                 bool checkIndices = false);

/// Whether `op` is a convolution lmc-convolution-to-runtime lowers to a
/// runtime call: lmc.conv, lmc.conv_input_grad or lmc.conv_weight_grad
/// with an f32 result and f32, bf16 or f16 operands.
bool isRuntimeConvolution(mlir::Operation *op);

} // namespace lmc

#endif // LMC_LOWERING_PASSES_H
