//===- KernelScalarReads.h - Scalars that only kernels use, read there ----===//
//
// Part of lmc-linalg-to-gpu-loops. A scalar loaded at function level whose
// value, and the pure arithmetic derived from it, only kernels use (the
// step's random key, hashed into the seed of dropout masks) is read by
// every kernel that uses it instead: the host then touches no memory, and
// the read is ordered with the kernels on the stream.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_GPULOOPS_KERNELSCALARREADS_H
#define LMC_LIB_LOWERING_GPULOOPS_KERNELSCALARREADS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace lmc {

/// Moves each function-level memref.load of `func` whose value reaches only
/// kernels (scf.parallel ops at function level), with the side-effect-free
/// ops between, into those kernels (a copy at the start of each). A load
/// whose value the host needs stays.
void readScalarsInKernels(mlir::RewriterBase &rewriter,
                          mlir::func::FuncOp func);

} // namespace lmc

#endif // LMC_LIB_LOWERING_GPULOOPS_KERNELSCALARREADS_H
