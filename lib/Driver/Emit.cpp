//===- Emit.cpp - LLVM IR, object file and executable emission ------------===//

#include "lmc/Driver/Emit.h"

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/runtime/model_fingerprint.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

namespace lmc {
namespace {

void addConstantBytes(llvm::Module &module, StringRef name,
                      llvm::ArrayRef<char> bytes, unsigned alignment) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Constant *init = llvm::ConstantDataArray::getRaw(
      StringRef(bytes.data(), bytes.size()), bytes.size(),
      llvm::Type::getInt8Ty(ctx));
  auto *global = new llvm::GlobalVariable(
      module, init->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, init, name);
  global->setAlignment(llvm::Align(alignment));
}

} // namespace

void addPackedEntryPoint(llvm::Module &module, StringRef entry,
                         StringRef wrapperName,
                         ArrayRef<int64_t> skippedSlots) {
  llvm::Function *callee = module.getFunction(entry);
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::getUnqual(ctx);
  auto *wrapperType =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrType}, false);
  auto *wrapper = llvm::Function::Create(
      wrapperType, llvm::GlobalValue::ExternalLinkage, wrapperName, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::SmallVector<llvm::Value *> args;
  for (int64_t slot = 0; args.size() < callee->arg_size(); ++slot) {
    if (llvm::is_contained(skippedSlots, slot))
      continue;
    llvm::Value *address =
        b.CreateConstGEP1_64(ptrType, wrapper->getArg(0), slot);
    args.push_back(b.CreateLoad(ptrType, address));
  }
  b.CreateCall(callee, args);
  b.CreateRetVoid();
}

std::unique_ptr<llvm::Module>
translateWithEntryPoints(ModuleOp module, llvm::LLVMContext &context,
                         const ModelDescription &model,
                         bool weightsAsPayload) {
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  registerOpenMPDialectTranslation(*module.getContext());
  // The entry points' tags live in the descriptor; LLVM translation has no
  // use for them (and would warn about every one).
  for (StringRef entry : {attrs::kTrainStep, attrs::kEvalStep,
                          attrs::kGradStep, attrs::kApplyStep,
                          attrs::kChunkStep})
    if (auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(entry)) {
      func.removeArgAttrsAttr();
      func.removeResAttrsAttr();
    }
  // Outlined loop nests stay out of line: inlined back, -O3 would face the
  // one huge function again. They keep external linkage: with internal
  // linkage, interprocedural constant propagation put the arena addresses
  // lmc-plan-buffers computes into their bodies in place of their noalias
  // arguments, and LLVM then vectorized with runtime overlap checks and
  // other reduction orders (a gradient norm 2e-6 off the f64 value instead
  // of 6e-8).
  module.walk([](LLVM::LLVMFuncOp func) {
    if (func->removeAttr(attrs::kOutlined))
      func.setNoInline(true);
  });
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "lmc_model");
  if (!llvmModule)
    return nullptr;
  for (StringRef entry : {attrs::kTrainStep, attrs::kEvalStep,
                          attrs::kGradStep, attrs::kApplyStep}) {
    if (!llvmModule->getFunction(entry)) {
      module.emitError("the lowered module has no '") << entry << "'";
      return nullptr;
    }
    auto skipped = model.inPlaceSlots.find(entry.str());
    addPackedEntryPoint(*llvmModule, entry, ("lmc_" + entry).str(),
                        skipped == model.inPlaceSlots.end()
                            ? ArrayRef<int64_t>()
                            : ArrayRef<int64_t>(skipped->second));
  }
  // Optional: not built for models with dynamic loss scaling.
  if (llvmModule->getFunction(attrs::kChunkStep))
    addPackedEntryPoint(*llvmModule, attrs::kChunkStep,
                        ("lmc_" + attrs::kChunkStep).str());
  std::string text = model.descriptor;
  addConstantBytes(*llvmModule, "lmc_model_descriptor",
                   llvm::ArrayRef<char>(text.c_str(), text.size() + 1), 1);
  // NUL-terminated; the optional symbols only where there is something
  // to say (a CPU without checked extensions still names its empty list).
  auto addString = [&](StringRef name, const std::string &value,
                       bool present) {
    if (present)
      addConstantBytes(*llvmModule, name,
                       llvm::ArrayRef<char>(value.c_str(), value.size() + 1),
                       1);
  };
  addString("lmc_build_info", model.buildInfo, !model.buildInfo.empty());
  addString("lmc_target_cpu", model.targetCpu, !model.targetCpu.empty());
  addString("lmc_target_cpu_features", model.targetCpuFeatures,
            !model.targetCpu.empty());
  llvm::Type *i64 = llvm::Type::getInt64Ty(context);
  if (weightsAsPayload || model.weights.empty()) {
    // A zero-length global cannot carry alignment: one byte stands in.
    addConstantBytes(*llvmModule, "lmc_model_weights", {0}, 64);
  } else {
    addConstantBytes(*llvmModule, "lmc_model_weights", model.weights.bytes(),
                     64);
  }
  if (weightsAsPayload) {
    llvm::Type *i8 = llvm::Type::getInt8Ty(context);
    new llvm::GlobalVariable(*llvmModule, i8, true,
                             llvm::GlobalValue::ExternalLinkage,
                             llvm::ConstantInt::get(i8, 1),
                             "lmc_model_weights_in_payload");
  }
  new llvm::GlobalVariable(
      *llvmModule, i64, true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantInt::get(i64, model.weights.size),
      "lmc_model_weights_size");
  if (!model.onnxModel.empty()) {
    addConstantBytes(*llvmModule, "lmc_model_onnx",
                     llvm::ArrayRef<char>(model.onnxModel.data(),
                                          model.onnxModel.size()),
                     1);
    new llvm::GlobalVariable(
        *llvmModule, i64, true, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantInt::get(i64, model.onnxModel.size()),
        "lmc_model_onnx_size");
  }
  return llvmModule;
}

void limitFullUnrolling() {
  auto &options = llvm::cl::getRegisteredOptions(); // not a copy
  auto it = options.find("unroll-full-max-count");
  if (it != options.end() && it->second->getNumOccurrences() == 0)
    it->second->addOccurrence(0, "unroll-full-max-count", "8");
}

void optimizeForTarget(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  // LLVM tunes many AVX-512 CPUs (rocketlake, icelake, skylake-avx512)
  // for 256-bit vectors, which spares client parts a clock drop in mostly
  // scalar code. The step's loop nests are long vector loops beside
  // library GEMMs that run 512-bit anyway: at 512 bits GPT's GELU
  // backward takes 0.97 ms where 256 bits take 1.15 (measured 2026-12-06).
  // (A named CPU's features are implied by its name, not in the string.)
  if (machine.getMCSubtargetInfo()->checkFeatures("+avx512f"))
    for (llvm::Function &function : module)
      if (!function.isDeclaration())
        function.addFnAttr("prefer-vector-width", "512");
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

std::string writeObject(llvm::Module &module, llvm::TargetMachine &machine,
                        StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return ("cannot write '" + path + "': " + ec.message()).str();
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, out, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return "the host target cannot emit object files";
  codegen.run(module);
  out.flush();
  return "";
}

LogicalResult emitObjectFile(MLIRContext *ctx, llvm::Module &module,
                             StringRef path, const TargetCpu &cpu,
                             llvm::function_ref<void(StringRef)> enterPhase) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(cpu);
  if (!machine)
    return emitError(UnknownLoc::get(ctx), "lmc: ")
           << llvm::toString(machine.takeError());
  if (enterPhase)
    enterPhase("LLVM -O3");
  limitFullUnrolling();
  optimizeForTarget(module, **machine);
  if (enterPhase)
    enterPhase("machine code");
  std::string error = writeObject(module, **machine, path);
  if (!error.empty())
    return emitError(UnknownLoc::get(ctx), "lmc: ") << error;
  return success();
}

/// The payload's trailer carries the model's fingerprint, so a payload of
/// another model is refused.
static uint64_t modelFingerprint(StringRef descriptor, uint64_t weightsSize) {
  return rt::fingerprintModel(descriptor.data(), descriptor.size(),
                              weightsSize);
}

LogicalResult appendWeightsPayload(MLIRContext *ctx, StringRef path,
                                   const ModelDescription &model) {
  auto fail = [&](const llvm::Twine &what) {
    return emitError(UnknownLoc::get(ctx), "lmc: ") << what.str();
  };
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize))
    return fail("cannot read '" + path + "': " + ec.message());
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Append);
  if (ec)
    return fail("cannot append the weights to '" + path + "': " +
                ec.message());
  // Page-aligned, so the runtime maps the weights where they lie.
  constexpr uint64_t kPage = 4096;
  const uint64_t offset = (fileSize + kPage - 1) / kPage * kPage;
  out.write_zeros(offset - fileSize);
  model.weights.write(out);
  auto writeU64 = [&](uint64_t value) {
    char bytes[8];
    for (int i = 0; i < 8; ++i)
      bytes[i] = char(value >> (8 * i));
    out.write(bytes, 8);
  };
  writeU64(offset);
  writeU64(model.weights.size);
  writeU64(modelFingerprint(model.descriptor, model.weights.size));
  out.write("LMCWGHT1", 8);
  out.close();
  if (out.has_error())
    return fail("cannot append the weights to '" + path +
                "': " + out.error().message());
  return success();
}

LogicalResult linkExecutable(MLIRContext *ctx,
                             llvm::ArrayRef<std::string> objectPaths,
                             StringRef outputPath, StringRef argv0, bool cuda) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0.str().c_str(), reinterpret_cast<void *>(&linkExecutable));
  llvm::SmallString<256> libDir(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(libDir, LMC_RUNTIME_LIBDIR_FROM_BINDIR);
  llvm::SmallString<256> runtime(libDir), kernels(libDir);
  llvm::sys::path::append(runtime, "liblmc_runtime.a");
  llvm::sys::path::append(kernels, "liblmc_kernels.a");
  for (StringRef lib : {runtime.str(), kernels.str()})
    if (!llvm::sys::fs::exists(lib))
      return emitError(UnknownLoc::get(ctx), "lmc: runtime library '")
             << lib << "' not found";

  llvm::SmallString<256> cudaSupport(libDir);
  llvm::sys::path::append(cudaSupport, "liblmc_runtime_cuda.a");
  if (cuda && !llvm::sys::fs::exists(cudaSupport))
    return emitError(UnknownLoc::get(ctx), "lmc: --target cuda needs '")
           << cudaSupport
           << "', which is built when the CUDA toolkit is found at "
              "configure time (LMC_CUDA_TOOLKIT=" LMC_CUDA_TOOLKIT ")";

  llvm::ErrorOr<std::string> linker = llvm::sys::findProgramByName("c++");
  if (!linker)
    return emitError(UnknownLoc::get(ctx),
                     "lmc: no C++ linker ('c++') on PATH");
  llvm::SmallVector<StringRef> args{*linker};
  for (const std::string &object : objectPaths)
    args.push_back(object);
  // The CUDA support library comes first and whole: it defines what the
  // runtime references weakly (device memory, device selection) and uses
  // the runtime's own code (block cache, communicators).
  if (cuda)
    args.append({"-Wl,--whole-archive", cudaSupport, "-Wl,--no-whole-archive"});
  // libomp is LLVM's, found where it was at build time (rpath).
  args.append({runtime, kernels, "-lopenblas", "-ldnnl", "-lmpi", "-lgloo",
               "-L" LMC_OPENMP_LIBDIR, "-lomp", "-Wl,-rpath," LMC_OPENMP_LIBDIR,
               "-lm", "-lpthread", "-o", outputPath});
  if (cuda)
    args.append({"-L" LMC_CUDA_TOOLKIT "/lib64", "-lcudart_static", "-lcublas",
                 "-lcublasLt", "-Wl,-rpath," LMC_CUDA_TOOLKIT "/lib64", "-ldl",
                 "-lrt"});
#ifdef LMC_SANITIZE_LINK_FLAG
  args.push_back(LMC_SANITIZE_LINK_FLAG); // sanitized runtime (LMC_SANITIZE)
#endif
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*linker, args, std::nullopt, {}, 0, 0,
                                         &error);
  if (status != 0)
    return emitError(UnknownLoc::get(ctx), "lmc: linking '")
           << outputPath << "' failed" << (error.empty() ? "" : ": ") << error;
  return success();
}

} // namespace lmc
