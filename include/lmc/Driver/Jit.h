//===- Jit.h - In-process compilation of lowered modules -------*- C++ -*-===//
//
// The tools that execute lmc-generated code without linking an executable
// (lmc-gradcheck, lmc-onnx-conformance) JIT-compile the lowered module with
// the real pipeline's output and call its entry points through the same
// packed `void (void **buffers)` convention as the training ABI.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_DRIVER_JIT_H
#define LMC_DRIVER_JIT_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <utility>

namespace lmc {

using PackedFn = void (*)(void **buffers);

/// A JIT-compiled module and its packed entry points.
struct JitModule {
  std::unique_ptr<mlir::ExecutionEngine> engine;
  llvm::SmallVector<PackedFn> entries; // parallel to jitCompile's `entries`
};

/// JIT-compiles `module` (in the LLVM dialect, bare-pointer convention)
/// with `lmc_<entry>(void **buffers)` wrappers for `entries`; `symbols`
/// resolves external functions such as the runtime kernels. Errors are
/// emitted on the module.
mlir::FailureOr<JitModule>
jitCompile(mlir::ModuleOp module, llvm::ArrayRef<llvm::StringRef> entries,
           llvm::ArrayRef<std::pair<const char *, void *>> symbols);

} // namespace lmc

#endif // LMC_DRIVER_JIT_H
