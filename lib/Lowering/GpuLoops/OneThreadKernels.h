//===- OneThreadKernels.h - kernels of one GPU thread -----------*- C++ -*-===//
//
// Part of lmc-linalg-to-gpu-loops (docs/cuda.md): what runs on one thread
// of a one-block kernel (sums to a scalar, scalar moves, loop nests that
// cannot be split), and the merging of such kernels that follow each other.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_GPULOOPS_ONETHREADKERNELS_H
#define LMC_LIB_LOWERING_GPULOOPS_ONETHREADKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace lmc {

/// The mapping of a one-dimensional parallel loop to GPU processor `p`.
mlir::gpu::ParallelLoopDimMappingAttr mapTo(mlir::MLIRContext *ctx,
                                            mlir::gpu::Processor p);

/// Moves `op` into a one-iteration scf.parallel mapped to a GPU block: one
/// thread runs it, in the stream's order with the other kernels.
void runOnOneThread(mlir::RewriterBase &rewriter, mlir::Operation *op);

/// Element moves at function level — a bucket of scalars packed for one
/// all-reduce (lmc-bucket-all-reduces) and unpacked after it — run as
/// one-thread kernels, a run of consecutive ones per kernel. A run whose
/// loaded value is used after it stays (the host needs it).
void scalarMovesToKernels(mlir::RewriterBase &rewriter,
                          mlir::func::FuncOp func);

/// Merges one-thread kernels that follow each other (the last steps of
/// split sums, a gradient norm's scalar arithmetic) into one: one launch
/// instead of several, the same operations in the same order. Constants
/// and allocations between them move in front, deallocations behind.
void mergeOneThreadKernels(mlir::RewriterBase &rewriter,
                           mlir::func::FuncOp func);

} // namespace lmc

#endif // LMC_LIB_LOWERING_GPULOOPS_ONETHREADKERNELS_H
