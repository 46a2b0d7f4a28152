//===- fuzz_dsl.cpp - libFuzzer target: the lmc DSL importer --------------===//
//
// Bytes -> lmc.importDslBuffer (lexer, parser, train block, emitter) ->
// verifier. Errors are expected (and swallowed); crashes, sanitizer reports,
// leaks and timeouts are bugs. The parameter budget is small so that a
// declared giant tensor is refused instead of filled.
//
//===----------------------------------------------------------------------===//
#include "lmc/Import/Dsl.h"

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
  lmc::DslImportOptions options;
  options.batch = 2;
  options.maxParamBytes = 16 << 20;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  lmc::DslTrainSettings settings;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      lmc::importDslBuffer(*context, text, "fuzz.lmc", options, &settings);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}
