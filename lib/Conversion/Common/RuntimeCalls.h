//===- RuntimeCalls.h - calls from lowered code into the lmc runtime -*- C++ -*-===//
//
// Shared by the passes that replace ops on buffers with runtime calls
// (lmc-matmul-to-runtime, lmc-shard-to-runtime, lmc-linalg-to-gpu-loops).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_CONVERSION_COMMON_RUNTIMECALLS_H
#define LMC_LIB_CONVERSION_COMMON_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace lmc {

/// The private declaration of runtime function `name` in `module`, created
/// at the module's start on first use.
mlir::func::FuncOp declareRuntimeFunction(mlir::ModuleOp module,
                                          mlir::OpBuilder &b,
                                          llvm::StringRef name,
                                          mlir::FunctionType type);

/// The address of `buffer`'s first element as an !llvm.ptr (the C ABI of
/// the runtime's functions).
mlir::Value bufferPointer(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value buffer);

} // namespace lmc

#endif // LMC_LIB_CONVERSION_COMMON_RUNTIMECALLS_H
