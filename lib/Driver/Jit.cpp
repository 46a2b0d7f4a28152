//===- Jit.cpp - In-process compilation of lowered modules ----------------===//

#include "lmc/Driver/Jit.h"
#include "lmc/Driver/Emit.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;

namespace lmc {

FailureOr<JitModule>
jitCompile(ModuleOp module, ArrayRef<StringRef> entries,
           ArrayRef<std::pair<const char *, void *>> symbols) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  // options.transformer is a function_ref: the lambda must outlive create().
  auto addEntryPoints = [&](llvm::Module *m) -> llvm::Error {
    for (StringRef name : entries)
      addPackedEntryPoint(*m, name, ("lmc_" + name).str());
    return llvm::Error::success();
  };
  ExecutionEngineOptions options;
  options.transformer = addEntryPoints;
  auto engineOrError = ExecutionEngine::create(module, options);
  if (!engineOrError)
    return module.emitError("JIT compilation failed: ")
           << llvm::toString(engineOrError.takeError());
  JitModule jit;
  jit.engine = std::move(*engineOrError);
  jit.engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (auto [name, address] : symbols)
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
  for (StringRef name : entries) {
    llvm::Expected<void *> fn = jit.engine->lookup(("lmc_" + name).str());
    if (!fn)
      return module.emitError("no entry point '")
             << name << "' after JIT: " << llvm::toString(fn.takeError());
    jit.entries.push_back(reinterpret_cast<PackedFn>(*fn));
  }
  return jit;
}

} // namespace lmc
