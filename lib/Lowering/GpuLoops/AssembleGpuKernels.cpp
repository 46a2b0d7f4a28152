//===- AssembleGpuKernels.cpp - ptxas and the launches' limits ------------===//
//
// gpu-module-to-binary{format=fatbin} runs ptxas and fatbinary itself but
// drops ptxas's report, the one place that says how many registers, how
// much local and shared memory each kernel needs. This pass takes the PTX
// objects of gpu-module-to-binary{format=isa} and runs the two tools
// itself with `ptxas -v`, so that a launch the GPU would refuse (too many
// threads, registers or shared memory for its block) is a compile error
// naming the kernel instead of CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES in the
// middle of a training step.
//
//===----------------------------------------------------------------------===//

#include "PtxasReport.h"

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace lmc {
#define GEN_PASS_DEF_LMCASSEMBLEGPUKERNELS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// A temporary file, removed when this goes.
struct TempFile {
  llvm::SmallString<128> path;
  std::optional<llvm::FileRemover> remover;
};

FailureOr<TempFile> createTemp(Operation *op, StringRef prefix,
                               StringRef suffix) {
  TempFile file;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, file.path))
    return op->emitError("cannot create a temporary file: ") << ec.message();
  file.remover.emplace(file.path);
  return file;
}

/// Runs `args` (args[0] is the tool's path) with stdout and stderr into
/// `log`; on failure, an error on `op` with what the tool said.
LogicalResult runTool(Operation *op, ArrayRef<StringRef> args, StringRef log) {
  std::optional<StringRef> redirects[] = {std::nullopt, log, log};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(args[0], args, std::nullopt, redirects,
                                         0, 0, &message);
  if (status == 0)
    return success();
  InFlightDiagnostic error = op->emitError()
                             << llvm::sys::path::filename(args[0]) << " failed";
  if (!message.empty())
    error << ": " << message;
  if (auto output = llvm::MemoryBuffer::getFile(log))
    error << "\n" << (*output)->getBuffer();
  return error;
}

struct Tools {
  std::string ptxas, fatbinary;
};

FailureOr<std::string> findTool(Operation *op, StringRef toolkit,
                                StringRef name) {
  llvm::SmallString<256> path(toolkit);
  llvm::sys::path::append(path, "bin", name);
  if (!llvm::sys::fs::can_execute(path))
    return op->emitError("the CUDA toolkit's ")
           << name << " is not at '" << path << "' (the pass's toolkit option)";
  return path.str().str();
}

DictionaryAttr resourcesAttr(MLIRContext *context,
                             const KernelReport &kernels) {
  Builder b(context);
  SmallVector<NamedAttribute> entries;
  for (const auto &[name, r] : kernels)
    entries.push_back(b.getNamedAttr(
        name,
        b.getDictionaryAttr({
            b.getNamedAttr("registers", b.getI64IntegerAttr(r.registers)),
            b.getNamedAttr("spill_stores", b.getI64IntegerAttr(r.spillStores)),
            b.getNamedAttr("spill_loads", b.getI64IntegerAttr(r.spillLoads)),
            b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(r.sharedBytes)),
            b.getNamedAttr("stack_bytes", b.getI64IntegerAttr(r.stackBytes)),
        })));
  return b.getDictionaryAttr(entries);
}

/// The kernels of one assembled binary: ptxas's report and each entry's
/// `.maxntid`.
struct AssembledKernels {
  KernelReport resources;
  llvm::StringMap<int64_t> maxThreads;
  unsigned registersPerBlock = 0;
};

struct AssembleGpuKernelsPass
    : impl::LmcAssembleGpuKernelsBase<AssembleGpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    Tools tools;
    bool anyBinary = false;
    llvm::StringMap<AssembledKernels> assembled;
    WalkResult walk = top.walk([&](gpu::BinaryOp binary) {
      if (!anyBinary) {
        anyBinary = true;
        FailureOr<std::string> ptxas = findTool(binary, toolkit, "ptxas");
        FailureOr<std::string> fatbinary =
            format == GpuBinaryFormat::Fatbin
                ? findTool(binary, toolkit, "fatbinary")
                : FailureOr<std::string>(std::string());
        if (failed(ptxas) || failed(fatbinary))
          return WalkResult::interrupt();
        tools = {*ptxas, *fatbinary};
      }
      FailureOr<AssembledKernels> kernels = assemble(binary, tools);
      if (failed(kernels))
        return WalkResult::interrupt();
      assembled[binary.getSymName()] = std::move(*kernels);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted() || failed(checkLaunches(top, assembled)))
      signalPassFailure();
  }

  /// Assembles `binary`'s one PTX object with `ptxas -v`, replaces it by
  /// the fatbin unless the format keeps PTX, and records the report.
  FailureOr<AssembledKernels> assemble(gpu::BinaryOp binary,
                                       const Tools &tools) {
    ArrayAttr objects = binary.getObjectsAttr();
    auto object =
        objects.size() == 1 ? dyn_cast<gpu::ObjectAttr>(objects[0]) : nullptr;
    auto target =
        object ? dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()) : nullptr;
    if (!target || object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError("expected one PTX object for an NVVM target "
                              "(gpu-module-to-binary{format=isa})");
    StringRef ptx = object.getObject().getValue();
    std::string prefix = ("lmc-" + binary.getSymName()).str();
    FailureOr<TempFile> ptxFile = createTemp(binary, prefix, "ptx");
    FailureOr<TempFile> cubin = createTemp(binary, prefix, "cubin");
    FailureOr<TempFile> log = createTemp(binary, prefix, "log");
    if (failed(ptxFile) || failed(cubin) || failed(log))
      return failure();
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(ptxFile->path, ec);
      os << ptx;
      if (ec || os.has_error())
        return binary.emitError("cannot write ") << ptxFile->path;
    }
    std::string optLevel = std::to_string(target.getO());
    SmallVector<StringRef> ptxasArgs = {
        tools.ptxas, "-v",          "-arch", target.getChip(), "--opt-level",
        optLevel,    ptxFile->path, "-o",    cubin->path};
    if (target.hasCmdOptions())
      for (Attribute option :
           cast<ArrayAttr>(target.getCmdOptions()->getValue()))
        if (auto text = dyn_cast<StringAttr>(option))
          ptxasArgs.push_back(text.getValue());
    if (failed(runTool(binary, ptxasArgs, log->path)))
      return failure();
    auto report = llvm::MemoryBuffer::getFile(log->path);
    if (!report)
      return binary.emitError("cannot read ptxas's report ") << log->path;

    AssembledKernels kernels;
    kernels.resources = parsePtxasReport((*report)->getBuffer());
    kernels.maxThreads = maxThreadsPerEntry(ptx);
    kernels.registersPerBlock = registersPerBlock(target.getChip());
    binary->setAttr(attrs::kKernelResources,
                    resourcesAttr(&getContext(), kernels.resources));
    warnAboutSpills(binary, kernels.resources);
    if (format == GpuBinaryFormat::Ptx)
      return kernels;

    StringRef sm = target.getChip();
    sm.consume_front("sm_");
    FailureOr<TempFile> fatbin = createTemp(binary, prefix, "fatbin");
    if (failed(fatbin))
      return failure();
    std::string elfImage =
        llvm::formatv("--image3=kind=elf,sm={0},file={1}", sm, cubin->path);
    // The PTX beside the machine code: a newer GPU's driver compiles it.
    std::string ptxImage =
        llvm::formatv("--image3=kind=ptx,sm={0},file={1}", sm, ptxFile->path);
    if (failed(runTool(binary,
                       {tools.fatbinary, "-64", elfImage, ptxImage, "--create",
                        fatbin->path},
                       log->path)))
      return failure();
    auto bytes = llvm::MemoryBuffer::getFile(fatbin->path);
    if (!bytes)
      return binary.emitError("cannot read ") << fatbin->path;
    Builder b(&getContext());
    binary.setObjectsAttr(b.getArrayAttr(gpu::ObjectAttr::get(
        &getContext(), target, gpu::CompilationTarget::Fatbin,
        b.getStringAttr((*bytes)->getBuffer()), /*properties=*/nullptr,
        /*kernels=*/nullptr)));
    return kernels;
  }

  static void warnAboutSpills(gpu::BinaryOp binary,
                              const KernelReport &kernels) {
    SmallVector<std::string> spilling;
    for (const auto &[name, r] : kernels)
      if (r.spillStores || r.spillLoads)
        spilling.push_back(llvm::formatv("{0} ({1} bytes stored, {2} loaded)",
                                         name, r.spillStores, r.spillLoads));
    if (spilling.empty())
      return;
    InFlightDiagnostic warning =
        binary.emitWarning()
        << spilling.size() << " kernel(s) spill registers to local memory: ";
    llvm::interleaveComma(spilling, warning);
  }

  /// Every launch of an assembled kernel whose block size is known at
  /// compile time, against the limits of its architecture.
  static LogicalResult
  checkLaunches(ModuleOp top, const llvm::StringMap<AssembledKernels> &all) {
    WalkResult walk = top.walk([&](gpu::LaunchFuncOp launch) {
      auto kernels = all.find(launch.getKernelModuleName());
      if (kernels == all.end())
        return WalkResult::advance();
      StringRef name = launch.getKernelName();
      auto resources = kernels->second.resources.find(name.str());
      if (resources == kernels->second.resources.end()) {
        launch.emitError("ptxas did not report kernel ") << name;
        return WalkResult::interrupt();
      }
      int64_t threads = 1;
      for (Value size : {launch.getBlockSizeX(), launch.getBlockSizeY(),
                         launch.getBlockSizeZ()}) {
        APInt value;
        if (!matchPattern(size, m_ConstantInt(&value)))
          return WalkResult::advance();
        threads *= value.getSExtValue();
      }
      int64_t dynamicShared = 0;
      if (Value bytes = launch.getDynamicSharedMemorySize()) {
        APInt value;
        if (matchPattern(bytes, m_ConstantInt(&value)))
          dynamicShared = value.getSExtValue();
      }
      LaunchLimits limits{kernels->second.registersPerBlock,
                          kernels->second.maxThreads.lookup(name)};
      std::string why =
          whyCannotLaunch(resources->second, threads, dynamicShared, limits);
      if (why.empty())
        return WalkResult::advance();
      launch.emitError("kernel ") << launch.getKernelModuleName().getValue()
                                  << "::" << name << " cannot launch: " << why;
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }
};

} // namespace
} // namespace lmc
