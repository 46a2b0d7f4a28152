//===- fuzz_dsl.cpp - libFuzzer target: the lmc DSL importer --------------===//
//
// Bytes -> lmc.importDslBuffer (lexer, parser, train block, emitter) ->
// verifier. Errors are expected (and swallowed); crashes, sanitizer reports,
// leaks and timeouts are bugs. The parameter budget is small so that a
// declared giant tensor is refused instead of filled.
//
//===----------------------------------------------------------------------===//
#include "lmc/Import/Dsl/Dsl.h"

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
  lmc::DslImportOptions options;
  options.batch = 2;
  options.maxParamBytes = 16 << 20;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  lmc::DslTrainSettings settings;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      lmc::importDslBuffer(context, text, "fuzz.lmc", options, &settings);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}
