//===- TargetCpu.cpp - The CPU an executable is compiled for -------------===//

#include "lmc/Driver/TargetCpu.h"

#include "lmc/runtime/cpu_features.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace lmc {
namespace {

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<const llvm::Target *> nativeTarget(const llvm::Triple &triple) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("no target for " + triple.str() + ": " + error);
  return target;
}

/// The CPU names a few users will look for first, for the error message.
constexpr const char *kCommonCpus =
    "native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4, haswell, "
    "skylake-avx512, icelake-server, sapphirerapids, znver3, znver4";

} // namespace

llvm::Expected<TargetCpu> resolveTargetCpu(llvm::StringRef cpu,
                                           llvm::StringRef extraFeatures) {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  llvm::Expected<const llvm::Target *> target = nativeTarget(triple);
  if (!target)
    return target.takeError();
  // Asked with no CPU first: a subtarget built for an unknown name or
  // feature warns on stderr and goes on without it.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      (*target)->createMCSubtargetInfo(triple, "", ""));
  TargetCpu result;
  llvm::SubtargetFeatures features;
  if (cpu == "native") {
    result.name = llvm::sys::getHostCPUName().str();
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature, enabled);
  } else if (generic->isCPUStringValid(cpu)) {
    result.name = cpu.str();
  } else {
    return fail("--cpu '" + cpu + "' is not a CPU LLVM knows (" + kCommonCpus +
                ", ...; `lmc --cpu help` lists them all)");
  }
  llvm::SmallVector<llvm::StringRef> extras;
  extraFeatures.split(extras, ',', -1, false);
  for (llvm::StringRef extra : extras) {
    extra = extra.trim();
    bool known = (extra.starts_with("+") || extra.starts_with("-")) &&
                 llvm::any_of(generic->getAllProcessorFeatures(),
                              [&](const llvm::SubtargetFeatureKV &kv) {
                                return extra.drop_front() == kv.Key;
                              });
    if (!known)
      return fail("--cpu-features '" + extra +
                  "': expected +NAME or -NAME with a feature LLVM knows for "
                  "x86-64 (avx2, avx512f, avx512bf16, ...; `lmc --cpu help` "
                  "lists them all)");
    features.AddFeature(extra);
  }
  result.features = features.getString();

  std::unique_ptr<llvm::MCSubtargetInfo> chosen(
      (*target)->createMCSubtargetInfo(triple, result.name, result.features));
  llvm::SmallVector<std::string> required;
  for (const rt::CpuFeature &feature : rt::kCpuFeatures)
    for (const llvm::SubtargetFeatureKV &kv :
         chosen->getAllProcessorFeatures())
      if (feature.name == llvm::StringRef(kv.Key) &&
          chosen->getFeatureBits().test(kv.Value))
        required.push_back(feature.name);
  result.required = llvm::join(required, ",");
  return result;
}

std::string listTargetCpus() {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  llvm::Expected<const llvm::Target *> target = nativeTarget(triple);
  if (!target) {
    llvm::consumeError(target.takeError());
    return "";
  }
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      (*target)->createMCSubtargetInfo(triple, "", ""));
  std::string text = "CPUs (--cpu; native: this machine's, " +
                     llvm::sys::getHostCPUName().str() + "):\n";
  for (const llvm::SubtargetSubTypeKV &cpu :
       generic->getAllProcessorDescriptions())
    text += "  " + std::string(cpu.Key) + "\n";
  text += "features (--cpu-features +NAME,-NAME):\n";
  for (const llvm::SubtargetFeatureKV &feature :
       generic->getAllProcessorFeatures())
    text += "  " + std::string(feature.Key) + "  " + feature.Desc + "\n";
  return text;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetCpu &cpu) {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  llvm::Expected<const llvm::Target *> target = nativeTarget(triple);
  if (!target)
    return target.takeError();
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>((*target)->createTargetMachine(
      triple, cpu.name, cpu.features, options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
}

} // namespace lmc
