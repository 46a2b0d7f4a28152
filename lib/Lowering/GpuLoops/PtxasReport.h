//===- PtxasReport.h - What ptxas -v says about kernels ---------*- C++ -*-===//
//
// The resources ptxas reports for each kernel, and whether a block of a
// given size can launch with them.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LOWERING_GPULOOPS_PTXASREPORT_H
#define LMC_LOWERING_GPULOOPS_PTXASREPORT_H

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace lmc {

struct KernelResources {
  int64_t registers = 0;   // per thread
  int64_t spillStores = 0; // bytes per thread
  int64_t spillLoads = 0;
  int64_t sharedBytes = 0; // static, per block
  int64_t stackBytes = 0;  // per thread
};

/// Kernels by name, in the order ptxas reports them.
using KernelReport =
    llvm::MapVector<std::string, KernelResources, llvm::StringMap<unsigned>>;

/// Each entry function of `ptxas -v`'s report, in its order:
///   ptxas info : Compiling entry function 'k' for 'sm_90'
///   ptxas info : Function properties for k
///       8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
///   ptxas info : Used 40 registers, used 0 barriers, 512 bytes smem, ...
KernelReport parsePtxasReport(llvm::StringRef report);

/// Each entry of `ptx` that declares `.maxntid x, y, z`: x * y * z.
llvm::StringMap<int64_t> maxThreadsPerEntry(llvm::StringRef ptx);

/// 32-bit registers a block may use on `chip` (sm_NN): 64 K, 32 K on the
/// Jetson chips sm_53 and sm_62 (CUDA C++ Programming Guide, "Technical
/// Specifications per Compute Capability").
unsigned registersPerBlock(llvm::StringRef chip);

struct LaunchLimits {
  unsigned registersPerBlock;
  int64_t maxThreads; // the kernel's .maxntid; 0 if it has none
};

/// Why a block of `threads` threads and `dynamicShared` bytes of dynamic
/// shared memory cannot launch a kernel with `resources`; "" if it can.
std::string whyCannotLaunch(const KernelResources &resources, int64_t threads,
                            int64_t dynamicShared, const LaunchLimits &limits);

} // namespace lmc

#endif // LMC_LOWERING_GPULOOPS_PTXASREPORT_H
