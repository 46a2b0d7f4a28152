//===- RuntimeCalls.h - calls from lowered code into the lmc runtime -*- C++
//-*-===//
//
// Shared by the passes that replace ops with runtime calls
// (lmc-matmul-to-runtime, lmc-shard-to-runtime, lmc-linalg-to-gpu-loops,
// lmc-attention-to-runtime, lmc-layer-norm-to-runtime,
// lmc-convolution-to-runtime).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_COMMON_RUNTIMECALLS_H
#define LMC_LIB_LOWERING_COMMON_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

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

/// The dense (identity layout) buffer type of a ranked tensor type.
mlir::MemRefType denseBufferType(mlir::Type tensor);

/// The address of `tensor`'s buffer for a call that only reads it (a
/// read-only `bufferization.to_buffer`, before bufferization); a null
/// pointer for a null value (an optional operand the op does not have).
mlir::Value readOnlyPointer(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value tensor);

/// The address of a constant i64 table holding `values` (a private
/// `memref.global` named `name` at the module's start, renamed if the name
/// is taken): how a call hands the runtime a struct of sizes.
mlir::Value constantTable(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::ModuleOp module, llvm::StringRef name,
                          llvm::ArrayRef<int64_t> values);

} // namespace lmc

#endif // LMC_LIB_LOWERING_COMMON_RUNTIMECALLS_H
