//===- MergeGpuModules.cpp - One gpu.module per host function -------------===//
//
// gpu-kernel-outlining gives every kernel a gpu.module of its own. Each
// module is a unit of gpu-module-to-binary (an LLVM target machine, the
// NVPTX backend, one ptxas process) and of loading at run time (one CUDA
// library), which costs milliseconds whatever the kernel: GPT-2 124M's
// step outlines about 13,500 kernels, 99 of its 140 s of compile went
// there. The kernels a host function launches are gathered into one module
// instead, so that the toolkit sees one translation unit per function.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace lmc {
#define GEN_PASS_DEF_LMCMERGEGPUMODULES
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The module's kernel when the module holds that one kernel and nothing
/// else, and has no attributes a merged module would lose (targets, an
/// offloading handler).
gpu::GPUFuncOp soleKernel(gpu::GPUModuleOp module) {
  if (module->getAttrDictionary().size() != 1) // sym_name alone
    return nullptr;
  Block &body = module.getBodyRegion().front();
  if (!llvm::hasSingleElement(body))
    return nullptr;
  auto kernel = dyn_cast<gpu::GPUFuncOp>(body.front());
  return kernel && kernel.isKernel() ? kernel : nullptr;
}

struct MergeGpuModulesPass : impl::LmcMergeGpuModulesBase<MergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    SymbolTable symbols(top);
    // Where each source module's kernel went (a module may be launched
    // more than once).
    DenseMap<StringAttr, SymbolRefAttr> moved;
    DenseMap<Operation *, gpu::GPUModuleOp> mergedForHost;
    SmallVector<gpu::GPUModuleOp> emptied;
    SmallVector<gpu::LaunchFuncOp> launches;
    top.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches) {
      StringAttr source = launch.getKernelModuleName();
      auto known = moved.find(source);
      if (known != moved.end()) {
        launch.setKernelAttr(known->second);
        continue;
      }
      auto module = symbols.lookup<gpu::GPUModuleOp>(source);
      auto host = launch->getParentOfType<FunctionOpInterface>();
      gpu::GPUFuncOp kernel = module ? soleKernel(module) : nullptr;
      if (!kernel || !host)
        continue;
      gpu::GPUModuleOp &merged = mergedForHost[host];
      if (!merged) {
        OpBuilder builder(module);
        merged = gpu::GPUModuleOp::create(builder, module.getLoc(),
                                          (host.getName() + "_kernels").str());
        symbols.insert(merged); // renamed if the name is taken
      }
      // Module names are unique in the parent, so they are unique kernel
      // names in the merged module.
      kernel.setName(source);
      kernel->moveBefore(&merged.getBodyRegion().front(),
                         merged.getBodyRegion().front().end());
      emptied.push_back(module);
      auto target = SymbolRefAttr::get(merged.getNameAttr(),
                                       {FlatSymbolRefAttr::get(source)});
      moved[source] = target;
      launch.setKernelAttr(target);
    }
    for (gpu::GPUModuleOp module : emptied)
      symbols.erase(module);
  }
};

} // namespace
} // namespace lmc
