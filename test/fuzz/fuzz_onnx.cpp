//===- fuzz_onnx.cpp - libFuzzer target: the ONNX importer ---------------===//
//
// Bytes -> binary ModelProto -> lmc.importOnnxBuffer -> verifier. Errors are
// expected (and swallowed); crashes, sanitizer reports, leaks and timeouts
// are bugs. The model "lives" in a directory that does not exist, so
// external data references fail without touching the file system.
//
//===----------------------------------------------------------------------===//
#include "lmc/Import/Onnx/Onnx.h"

#include "FuzzContext.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>
#include <memory>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = lmc::fuzz::context();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  lmc::OnnxImportOptions options;
  options.batch = 2;
  options.maxParamBytes = 64 << 20;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module = lmc::importOnnxBuffer(
      context, bytes, "/nonexistent-lmc-fuzz/model.onnx", options);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}
