//===- TargetCpu.h - The CPU an executable is compiled for ------*- C++ -*-===//
//
// `lmc --cpu NAME --cpu-features +a,-b`: the host's CPU by default, or one
// named in clang's -march vocabulary (LLVM's CPU names: x86-64-v3, znver4,
// icelake-server, ...). The executable records it and checks at startup
// that the CPU it runs on has the extensions the code may use.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_DRIVER_TARGETCPU_H
#define LMC_DRIVER_TARGETCPU_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace lmc {

struct TargetCpu {
  /// LLVM's name of the CPU: the host's for `native`.
  std::string name;
  /// LLVM's feature string (+a,-b,...): the CPU's own features for a named
  /// CPU are implied by `name`; `native` lists the host's.
  std::string features;
  /// The extensions of lmc/runtime/cpu_features.h the code may use,
  /// comma-separated (lmc_target_cpu_features).
  std::string required;
};

/// Resolves `cpu` ("native" or an LLVM CPU name) and `extraFeatures`
/// (comma-separated `+name`/`-name`) for the process's triple; an error
/// names the unknown CPU or feature.
llvm::Expected<TargetCpu> resolveTargetCpu(llvm::StringRef cpu,
                                           llvm::StringRef extraFeatures);

/// `lmc --cpu help`: every CPU and feature name LLVM knows for the host's
/// architecture, one a line.
std::string listTargetCpus();

/// The TargetMachine that compiles for `cpu` (-O3, PIC).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetCpu &cpu);

} // namespace lmc

#endif // LMC_DRIVER_TARGETCPU_H
