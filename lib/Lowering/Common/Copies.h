//===- Copies.h - memref.copy as linalg.copy --------------------*- C++ -*-===//
//
// Shared by lmc-strided-copies-to-linalg (the CPU: strided copies only) and
// lmc-linalg-to-gpu-loops (the GPU: every copy becomes a kernel).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_COMMON_COPIES_H
#define LMC_LIB_LOWERING_COMMON_COPIES_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace lmc {

/// Rewrites each memref.copy under `root` that `select` accepts into a
/// linalg.copy of the same buffers.
void copiesToLinalg(mlir::RewriterBase &rewriter, mlir::Operation *root,
                    llvm::function_ref<bool(mlir::memref::CopyOp)> select);

} // namespace lmc

#endif // LMC_LIB_LOWERING_COMMON_COPIES_H
