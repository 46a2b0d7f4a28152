//===- lmc.cpp - the lmc compiler driver ----------------------------------===//
//
//   lmc model.onnx -o train [--batch N] [--loss ...] [--optimizer ...]
//   lmc model.lmc -o train          (the DSL; its train block sets defaults)
//
// Imports a model, runs the training pipeline and emits MLIR, LLVM IR, an
// object file or a training executable.
//
//===----------------------------------------------------------------------===//

#include "Options.h"
#include "Progress.h"

#include "lmc/Driver/Emit.h"
#include "lmc/Driver/KernelSummary.h"
#include "lmc/Driver/Pipelines.h"
#include "lmc/Driver/RematChoice.h"
#include "lmc/Import/Dsl/Dsl.h"
#include "lmc/Import/Onnx/Onnx.h"
#include "lmc/Support/Bytes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <mutex>
#include <optional>
#include <string>
#include <thread>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

using namespace lmc::cli;

/// The train block of a `.lmc` input (empty for other inputs).
lmc::DslTrainSettings dslSettings;
/// An ONNX input as --export-onnx embeds it (empty for other inputs).
lmc::OnnxExportSource onnxExportSource;

bool isOnnxInput() {
  StringRef extension = llvm::sys::path::extension(inputPath);
  return extension != ".lmc" && extension != ".mlir";
}

OwningOpRef<ModuleOp> loadModel(MLIRContext &context) {
  if (llvm::sys::path::extension(inputPath) == ".lmc") {
    lmc::DslImportOptions options;
    options.batch = batch;
    options.maxParamBytes = maxParamBytes;
    return lmc::importDslFile(context, inputPath, options, &dslSettings);
  }
  if (llvm::sys::path::extension(inputPath) == ".mlir") {
    llvm::SourceMgr sourceMgr;
    std::string error;
    auto file = openInputFile(inputPath, &error);
    if (!file) {
      llvm::errs() << "lmc: " << error << "\n";
      return nullptr;
    }
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  lmc::OnnxImportOptions options;
  options.batch = batch;
  options.rebindFixedBatch = true;
  options.maxParamBytes = maxParamBytes;
  return lmc::importOnnxFile(context, inputPath, options, &onnxExportSource);
}

/// Module printing flags: large constants (the embedded weights) are elided
/// unless --mlir-elide-elementsattrs-if-larger says otherwise.
OpPrintingFlags printingFlags() {
  OpPrintingFlags flags;
  if (!flags.getLargeElementsAttrLimit())
    flags.elideLargeElementsAttrs(16);
  return flags;
}

/// Where printed IR goes: -o, or stdout.
LogicalResult writeText(llvm::function_ref<void(llvm::raw_ostream &)> print) {
  std::string error;
  auto out = openOutputFile(outputPath.empty() ? std::string("-") : outputPath.getValue(), &error);
  if (!out) {
    llvm::errs() << "lmc: " << error << "\n";
    return failure();
  }
  print(out->os());
  out->keep();
  return success();
}

/// The executable's budget of parts per product (--matmul-parts; by default
/// this machine's cores, rounded down to a power of two, at most 16); none
/// for --target cuda, whose products are cuBLAS calls.
std::optional<int64_t> cpuMatmulParts() {
  if (target == "cuda")
    return std::nullopt;
  if (givenOnCommandLine("matmul-parts"))
    return matmulParts.getValue();
  unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0) // unknown: the runtime's default
    return std::nullopt;
  int64_t parts = 1;
  while (parts < 16 && 2 * parts <= int64_t(cores))
    parts *= 2;
  return parts;
}

/// The lowering target of --target/--gpu-arch/--cuda-path, or failure
/// with a message.
FailureOr<lmc::LoweringTarget> loweringTarget() {
  lmc::LoweringTarget result;
  result.multithreaded = true;
  result.gpuLoopsOnCpu = gpuLoopsOnCpu;
  result.poisonBuffers = poisonStepBuffers;
  if (target == "cpu")
    return result;
  if (target != "cuda") {
    llvm::errs() << "lmc: unknown --target '" << target
                 << "'; expected cpu or cuda\n";
    return failure();
  }
  if (!llvm::Regex("^sm_[0-9]+[a-z]?$").match(gpuArch)) {
    llvm::errs() << "lmc: --gpu-arch '" << gpuArch
                 << "' is not a CUDA architecture like sm_80 or sm_90\n";
    return failure();
  }
  llvm::SmallString<256> ptxas(cudaPath.getValue());
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  if (!llvm::sys::fs::can_execute(ptxas)) {
    llvm::errs() << "lmc: --target cuda needs the CUDA toolkit's ptxas, not "
                    "found at '"
                 << ptxas << "' (set --cuda-path)\n";
    return failure();
  }
  if (gpuFormat != "fatbin" && gpuFormat != "ptx") {
    llvm::errs() << "lmc: unknown --gpu-format '" << gpuFormat
                 << "'; expected fatbin or ptx\n";
    return failure();
  }
  result.cuda =
      lmc::LoweringTarget::Cuda{gpuArch, cudaPath, gpuFormat == "ptx"};
  return result;
}

/// Remembers the sharding pass that failed, if one did: upstream
/// partitioning that cannot carry a --shard rule through the model shows as
/// a verifier error on some op, which alone does not say what led there.
struct ShardingFailure : public mlir::PassInstrumentation {
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override {
    llvm::StringRef name = pass->getArgument();
    if (name != "sharding-propagation" && name != "shard-partition" &&
        !name.starts_with("lmc-shard"))
      return;
    std::lock_guard<std::mutex> lock(mutex); // per-function passes run
    failedPass = name.str();                 // on several threads
  }

  /// After the pipeline failed: what to tell the user, if it was sharding.
  void explain() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failedPass.empty())
      llvm::errs()
          << "lmc: partitioning the model for --mesh failed in '"
          << failedPass
          << "': the --shard rules split a tensor in a way upstream sharding "
             "cannot carry through this model (splitting weights "
             "Megatron-style, a projection's rows then the next one's "
             "columns, is supported; docs/distributed.md)\n";
  }

  std::mutex mutex;
  std::string failedPass;
};

LogicalResult compile(MLIRContext &context, const char *argv0,
                      const std::string &buildInfo,
                      lmc::cli::CompileProgress &progress) {
  progress.enter("import");
  OwningOpRef<ModuleOp> module = loadModel(context);
  if (!module)
    return failure();
  // Checked before any pass runs (the DSL's mesh is known once it loaded).
  FailureOr<lmc::LoweringTarget> lowerFor = loweringTarget();
  if (failed(lowerFor))
    return failure();
  llvm::Expected<lmc::TargetCpu> targetCpu =
      lmc::resolveTargetCpu(cpu, cpuFeatures);
  if (!targetCpu) {
    llvm::errs() << "lmc: " << llvm::toString(targetCpu.takeError()) << "\n";
    return failure();
  }

  bool stopInMlir = emit == Artifact::MLIR || compileTo <= lmc::Phase::Lower;
  lmc::Phase lastTrainingPhase =
      std::min(compileTo.getValue(), lmc::Phase::Precision);
  lmc::TrainingOptions training = trainingFlags;
  if (!readChoiceFlags(training))
    return failure();
  lmc::applyDslTrainDefaults(dslSettings, training, givenOnCommandLine);
  // f16's narrow range needs loss scaling; other precisions may ask for it.
  training.lossScaling =
      lossScaling || training.precision.precision == lmc::Precision::F16;

  // The command line's mesh replaces the DSL's; its shard rules come first
  // (the first rule matching a parameter wins).
  lmc::ShardingOptions sharding;
  sharding.mesh = mesh.getNumOccurrences() ? mesh.getValue()
                                           : dslSettings.mesh.value_or("");
  std::vector<std::string> rules(lmc::cli::shard.begin(),
                                 lmc::cli::shard.end());
  llvm::append_range(rules, dslSettings.shard);
  sharding.shard = llvm::join(rules, ";");
  if (!sharding.mesh.empty())
    training.shard = sharding.shard;
  if (!checkFlagCombinations(llvm::sys::path::extension(inputPath) == ".mlir",
                             sharding, training))
    return failure();
  const bool cpuKernels = cpuKernelsUnavailableBy(sharding, training).empty();
  training.fuseAttention = fuseAttention && cpuKernels;
  training.fuseLayerNorm = fuseLayerNorm && cpuKernels;

  if (givenOnCommandLine("activation-budget")) {
    progress.enter("remat choice");
    const bool meshed = !sharding.mesh.empty();
    std::string tooLarge;
    FailureOr<lmc::RematChoice> choice = lmc::chooseRematPolicy(
        *module, training, activationBudget, meshed, tooLarge);
    if (failed(choice)) {
      if (!tooLarge.empty())
        llvm::errs() << "lmc: the step's activations need more than "
                        "--activation-budget "
                     << lmc::describeBytes(activationBudget)
                     << " with every --remat policy (estimated: " << tooLarge
                     << "); compile with a smaller --batch"
                     << (meshed ? " (with --mesh, --remat is not available)"
                                : "")
                     << " or a larger budget\n";
      return failure();
    }
    if (!quiet)
      llvm::errs() << "lmc: --activation-budget "
                   << lmc::describeBytes(activationBudget) << ": --remat "
                   << choice->policy << ", step activations estimated at "
                   << lmc::describeBytes(choice->activationBytes) << "\n";
    training.remat = choice->policy;
  }

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  pm.addInstrumentation(progress.instrumentation());
  lmc::buildLmcTrainingPipeline(pm, training, lastTrainingPhase);
  if (failed(pm.run(*module)))
    return failure();
  if (stopInMlir && compileTo < lmc::Phase::Shard)
    return writeText([&](llvm::raw_ostream &os) { module->print(os, printingFlags()); });

  progress.enter("descriptor");
  FailureOr<lmc::ModelDescription> model =
      lmc::describeModel(*module, cpuMatmulParts());
  if (failed(model))
    return failure();
  model->buildInfo = buildInfo;
  model->targetCpu = targetCpu->name;
  model->targetCpuFeatures = targetCpu->required;
  if (isOnnxInput()) {
    llvm::StringSet<> trained;
    for (const std::string &name : model->paramNames)
      trained.insert(name);
    progress.enter("ONNX copy");
    FailureOr<std::string> onnx =
        lmc::serializeOnnxForExport(context, onnxExportSource, trained);
    if (failed(onnx))
      return failure();
    model->onnxModel = std::move(*onnx);
  }
  PassManager lowering(&context);
  if (failed(applyPassManagerCLOptions(lowering)))
    return failure();
  auto shardingFailure = std::make_unique<ShardingFailure>();
  ShardingFailure &explainSharding = *shardingFailure;
  lowering.addInstrumentation(std::move(shardingFailure));
  applyDefaultTimingPassManagerCLOptions(lowering);
  lowering.addInstrumentation(progress.instrumentation());
  lmc::buildLmcLoweringPipeline(lowering, sharding, compileTo, *lowerFor);
  if (failed(lowering.run(*module))) {
    explainSharding.explain();
    return failure();
  }
  lmc::describeLowering(*module, *model);
  if (progress.verbose() && lowerFor->cuda) {
    std::string summary;
    llvm::raw_string_ostream os(summary);
    lmc::summarizeGpuKernels(*module, os);
    if (!summary.empty())
      progress.addNote(summary);
  }
  if (stopInMlir)
    return writeText([&](llvm::raw_ostream &os) { module->print(os, printingFlags()); });

  progress.enter("LLVM IR");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      lmc::translateWithEntryPoints(*module, llvmContext, *model,
                                    /*weightsAsPayload=*/emit == Artifact::Executable);
  if (!llvmModule)
    return failure();
  if (emit == Artifact::LLVM)
    return writeText([&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });

  std::string output = outputPath.empty()
                           ? std::string(emit == Artifact::Object ? "a.o" : "a.out")
                           : outputPath.getValue();
  auto enterPhase = [&](StringRef phase) { progress.enter(phase); };
  if (emit == Artifact::Object)
    return lmc::emitObjectFile(&context, *llvmModule, output, *targetCpu,
                               enterPhase);

  // The step's code in parts compiled on parallel threads; a fixed count,
  // so that every machine builds the same executable.
  constexpr int kCodegenParts = 4;
  std::vector<std::string> objectPaths;
  std::vector<std::unique_ptr<llvm::FileRemover>> removeObjects;
  for (int i = 0; i < kCodegenParts; ++i) {
    llvm::SmallString<128> objectPath;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("lmc", "o",
                                                                objectPath)) {
      llvm::errs() << "lmc: cannot create a temporary file: " << ec.message()
                   << "\n";
      return failure();
    }
    objectPaths.push_back(objectPath.str().str());
    removeObjects.push_back(std::make_unique<llvm::FileRemover>(objectPath));
  }
  if (failed(lmc::emitObjectFilesInParallel(&context, *llvmModule,
                                            objectPaths, *targetCpu,
                                            enterPhase)))
    return failure();
  progress.enter("link");
  if (failed(lmc::linkExecutable(&context, objectPaths, output, argv0,
                                 lowerFor->cuda.has_value())))
    return failure();
  return lmc::appendWeightsPayload(&context, output, *model);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  lmc::registerLmcPasses();
  lmc::cli::parseCommandLine(argc, argv);

  DialectRegistry registry;
  lmc::registerLmcDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // An error is a line or two for a user; the IR of the op it concerns is
  // for lmc's developers (-v, or MLIR's own flag).
  if (!lmc::cli::verbose &&
      !lmc::cli::givenOnCommandLine("mlir-print-op-on-diagnostic"))
    context.printOpOnDiagnostic(false);
  // Prints `file:line:col: error: ...` (with the source line for .mlir input).
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string buildInfo = lmc::cli::versionLine() + "\n" +
                          lmc::cli::commandLine(argc, argv);
  using Progress = lmc::cli::CompileProgress;
  Progress progress(lmc::cli::quiet     ? Progress::Mode::Off
                    : lmc::cli::verbose ? Progress::Mode::Verbose
                    : llvm::sys::Process::StandardErrIsDisplayed()
                        ? Progress::Mode::Terminal
                        : Progress::Mode::Off);
  progress.attachTo(context);
  bool ok = succeeded(compile(context, argv[0], buildInfo, progress));
  progress.finish(ok);
  return ok ? 0 : 1;
}
