//===- fuzz_onnx.cpp - libFuzzer target: the ONNX importer ---------------===//
//
// Bytes -> binary ModelProto -> lmc.importOnnxBuffer -> verifier. Errors are
// expected (and swallowed); crashes, sanitizer reports, leaks and timeouts
// are bugs. The model "lives" in a directory that does not exist, so
// external data references fail without touching the file system.
//
//===----------------------------------------------------------------------===//
#include "lmc/Import/Onnx.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace {
std::unique_ptr<mlir::MLIRContext> context;
unsigned runs = 0;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Attributes are uniqued in the context and live as long as it: start a
  // fresh one now and then so long runs stay within the RSS limit.
  if (!context || ++runs % 500 == 0) {
    context = std::make_unique<mlir::MLIRContext>(
        mlir::MLIRContext::Threading::DISABLED);
  }
  mlir::ScopedDiagnosticHandler quiet(
      context.get(), [](mlir::Diagnostic &) { return mlir::success(); });
  lmc::OnnxImportOptions options;
  options.batch = 2;
  options.maxParamBytes = 64 << 20;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module = lmc::importOnnxBuffer(
      *context, bytes, "/nonexistent-lmc-fuzz/model.onnx", options);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}
