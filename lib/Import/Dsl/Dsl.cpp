//===- Dsl.cpp - lmc DSL importer: files, standard library, model ---------===//
//
// Lexes and parses the standard library (compiled in from Stdlib.lmc)
// and the model file into one program, reads its train block, and emits the
// model (Emitter.cpp).
//
//===----------------------------------------------------------------------===//

#include "lmc/Import/Dsl/Dsl.h"

#include "Emitter.h"
#include "Train.h"

#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace lmc {

/// The standard library's source text (generated from Stdlib.lmc).
static constexpr const char kStdlib[] =
#include "Stdlib.inc"
    ;
static constexpr llvm::StringLiteral kStdlibName = "<lmc-stdlib>";
/// DSL files are small; a bigger one is refused before it is read.
static constexpr uint64_t kMaxDslFileBytes = uint64_t(64) << 20;

OwningOpRef<ModuleOp> importDslBuffer(MLIRContext &context, StringRef source,
                                      StringRef path,
                                      const DslImportOptions &options,
                                      DslTrainSettings *settingsOut) {
  context.loadDialect<func::FuncDialect, LmcDialect>();
  dsl::Program program;
  bool lexError = false;
  std::vector<dsl::Token> stdlib =
      dsl::lex(&context, kStdlibName, kStdlib, lexError);
  bool failedAny = lexError || failed(dsl::parse(&context, stdlib, program));
  std::vector<dsl::Token> tokens = dsl::lex(&context, path, source, lexError);
  // The parser would only repeat a lexical error as a syntax error.
  if (lexError)
    return nullptr;
  bool parsed = succeeded(dsl::parse(&context, tokens, program));

  DslTrainSettings settings;
  DictionaryAttr schedule;
  failedAny |= failed(dsl::readTrainBlock(&context, program, settings, schedule));
  if (parsed && program.models.empty()) {
    emitError(FileLineColLoc::get(&context, path, 1, 1))
        << "no model in this file; define one with 'model NAME { ... }'";
    return nullptr;
  }
  if (program.models.size() > 1) {
    InFlightDiagnostic diag =
        emitError(program.models[1]->loc.get(&context));
    diag << "a file defines one model";
    diag.attachNote(program.models[0]->loc.get(&context))
        << "the first model is here";
    return nullptr;
  }
  // Syntax errors leave a partial tree: emitting it would only add noise.
  if (!parsed)
    return nullptr;

  uint64_t seed = options.seed ? *options.seed : settings.seed.value_or(0);
  dsl::Emitter emitter(context, options, settings.batch, seed);
  OwningOpRef<ModuleOp> module = emitter.run(program, *program.models[0]);
  if (!module || failedAny)
    return nullptr;

  if (schedule)
    (*module)->setAttr(attrs::kSchedule, schedule);
  // A model that computes its own `loss` trains on it unless told otherwise.
  if (!settings.loss) {
    auto forward = module->lookupSymbol<func::FuncOp>(attrs::kForward);
    for (unsigned i = 0; i < forward.getNumResults(); ++i)
      if (auto name = forward.getResultAttrOfType<StringAttr>(i, attrs::kOutput);
          name && name.getValue() == "loss")
        settings.loss = "output:loss";
  }
  if (settingsOut)
    *settingsOut = settings;
  return module;
}

OwningOpRef<ModuleOp> importDslFile(MLIRContext &context, StringRef path,
                                    const DslImportOptions &options,
                                    DslTrainSettings *settings) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    emitError(loc) << "cannot read DSL file: " << ec.message();
    return nullptr;
  }
  if (status.type() != llvm::sys::fs::file_type::regular_file) {
    emitError(loc) << "cannot read DSL file: not a regular file";
    return nullptr;
  }
  if (status.getSize() > kMaxDslFileBytes) {
    emitError(loc) << "DSL file is " << status.getSize()
                   << " bytes, more than the limit of " << kMaxDslFileBytes;
    return nullptr;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    emitError(loc) << "cannot read DSL file: " << file.getError().message();
    return nullptr;
  }
  return importDslBuffer(context, (*file)->getBuffer(), path, options,
                         settings);
}

} // namespace lmc
