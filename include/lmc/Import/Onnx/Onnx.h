//===- Onnx.h - ONNX model importer -----------------------------*- C++ -*-===//
//
// Builds `func.func @forward` in the lmc dialect from an ONNX model: float
// initializers become arguments tagged `lmc.param` (+ `lmc.init`), graph
// inputs become arguments tagged `lmc.input`, graph outputs become results
// tagged `lmc.output` (see lmc/Dialect/Lmc/IR/LmcAttributes.h).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_IMPORT_ONNX_H
#define LMC_IMPORT_ONNX_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lmc {

struct OnnxImportOptions {
  /// Size bound to the symbolic batch dimension (a dim_param, or an unknown
  /// first dimension of an input). 0 = leave unbound (an error if needed).
  int64_t batch = 0;
  /// When every input has a fixed leading size (an export without
  /// dynamic_axes), `batch` replaces the first input's and follows it
  /// through the constant shapes that carry it (lmc --batch). Off: `batch`
  /// binds symbolic dimensions only.
  bool rebindFixedBatch = false;
  /// Budget for the parameters (float initializers): a model that needs more
  /// bytes is refused before any tensor data is converted. 0 = no limit.
  uint64_t maxParamBytes = uint64_t(8) << 30;
};

/// The largest model file the importer reads (protobuf's 2 GiB message
/// limit; bigger weights belong in external data).
constexpr uint64_t kMaxOnnxFileBytes = (uint64_t(1) << 31) - 1;
/// Protobuf nesting depth the binary reader accepts (protobuf's default is
/// 100; a graph attribute costs 3 levels).
constexpr int kOnnxRecursionLimit = 64;

/// What `--export-onnx` needs of an imported model, kept from the import
/// so that the model is read once: its ModelProto without the values of
/// the float initializers, which the import moved into `lmc.init`
/// attributes (held by the MLIRContext) and serializeOnnxForExport takes
/// from there.
class OnnxExportSource {
public:
  OnnxExportSource();
  ~OnnxExportSource();
  struct State; // lib/Import/Onnx/Importer.h
  std::unique_ptr<State> state;
};

/// Imports a binary ONNX model (`.onnx`) or one in the ONNX text syntax
/// (`.onnxtxt`, parsed by libonnx's parser). A binary model is parsed as
/// it is read (not mapped whole beside its parsed copy), and each float
/// initializer's bytes are released once its `lmc.init` value is made, so
/// the weights are in memory about once. Errors are emitted as diagnostics
/// on `context` and yield a null module. With `exportSource`, the model is
/// kept there for serializeOnnxForExport.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
               const OnnxImportOptions &options,
               OnnxExportSource *exportSource = nullptr);

/// Imports a model held in memory (binary protobuf, or the text syntax when
/// `isText`). `path` names it in diagnostics and locations, and its
/// directory is where external data is looked up.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxBuffer(mlir::MLIRContext &context, llvm::StringRef bytes,
                 llvm::StringRef path, const OnnxImportOptions &options,
                 bool isText = false);

/// A serialized TensorProto (the ONNX backend tests' `input_N.pb` /
/// `output_N.pb`) as a dense attribute; errors are emitted at `path`.
mlir::FailureOr<mlir::DenseElementsAttr>
readOnnxTensorProto(mlir::MLIRContext &context, llvm::StringRef bytes,
                    llvm::StringRef path);

/// The model `source` kept from its import, as an executable embeds it for
/// `--export-onnx` (docs/runtime-abi.md): binary protobuf without the
/// initializers named in `trained` (the runtime appends them with their
/// trained values), with every other initializer's value and external
/// data in, so the executable carries the whole model. Consumes the kept
/// model. Errors are emitted on `context`.
mlir::FailureOr<std::string>
serializeOnnxForExport(mlir::MLIRContext &context, OnnxExportSource &source,
                       const llvm::StringSet<> &trained);

} // namespace lmc

#endif // LMC_IMPORT_ONNX_H
