//===- Onnx.h - ONNX model importer -----------------------------*- C++ -*-===//
//
// Builds `func.func @forward` in the lmc dialect from an ONNX model: float
// initializers become arguments tagged `lmc.param` (+ `lmc.init`), graph
// inputs become arguments tagged `lmc.input`, graph outputs become results
// tagged `lmc.output` (see lmc/Transforms/Attributes.h).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_IMPORT_ONNX_H
#define LMC_IMPORT_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace lmc {

struct OnnxImportOptions {
  /// Size bound to the symbolic batch dimension (a dim_param, or an unknown
  /// first dimension of an input). 0 = leave unbound (an error if needed).
  int64_t batch = 0;
};

/// Imports a binary ONNX model (`.onnx`) or one in the ONNX text syntax
/// (`.onnxtxt`, parsed by libonnx's parser). Errors are emitted as
/// diagnostics on `context` and yield a null module.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context,
                                                 llvm::StringRef path,
                                                 const OnnxImportOptions &options);

} // namespace lmc

#endif // LMC_IMPORT_ONNX_H
