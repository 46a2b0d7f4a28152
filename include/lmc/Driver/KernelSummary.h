//===- KernelSummary.h - The CUDA kernels' resources -----------*- C++ -*-===//

#ifndef LMC_DRIVER_KERNELSUMMARY_H
#define LMC_DRIVER_KERNELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace lmc {

/// What lmc-assemble-gpu-kernels recorded on the module's gpu.binary ops
/// (`lmc.kernel_resources`): the number of kernels, registers per thread
/// (median and the largest, with its kernel), the kernels that spill, and
/// the most shared memory and stack a kernel uses. Nothing without them.
void summarizeGpuKernels(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace lmc

#endif // LMC_DRIVER_KERNELSUMMARY_H
