//===- KernelSummary.cpp - The CUDA kernels' resources in one line --------===//

#include "lmc/Driver/KernelSummary.h"

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <algorithm>

using namespace mlir;

namespace lmc {

namespace {

struct Kernel {
  std::string name; // binary::kernel
  int64_t registers, spillStores, spillLoads, sharedBytes, stackBytes;
};

int64_t field(DictionaryAttr resources, StringRef name) {
  auto value = resources.getAs<IntegerAttr>(name);
  return value ? value.getInt() : 0;
}

} // namespace

void summarizeGpuKernels(ModuleOp module, llvm::raw_ostream &os) {
  std::vector<Kernel> kernels;
  unsigned binaries = 0;
  std::string chip;
  module.walk([&](gpu::BinaryOp binary) {
    auto all = binary->getAttrOfType<DictionaryAttr>(attrs::kKernelResources);
    if (!all)
      return;
    ++binaries;
    for (Attribute object : binary.getObjectsAttr())
      if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(
              cast<gpu::ObjectAttr>(object).getTarget()))
        chip = target.getChip().str();
    for (NamedAttribute entry : all) {
      auto r = cast<DictionaryAttr>(entry.getValue());
      kernels.push_back(
          {(binary.getSymName() + "::" + entry.getName().getValue()).str(),
           field(r, "registers"), field(r, "spill_stores"),
           field(r, "spill_loads"), field(r, "shared_bytes"),
           field(r, "stack_bytes")});
    }
  });
  if (kernels.empty())
    return;
  std::vector<int64_t> registers;
  for (const Kernel &k : kernels)
    registers.push_back(k.registers);
  std::nth_element(registers.begin(), registers.begin() + registers.size() / 2,
                   registers.end());
  auto byRegisters = [](const Kernel &a, const Kernel &b) {
    return a.registers < b.registers;
  };
  const Kernel &most =
      *std::max_element(kernels.begin(), kernels.end(), byRegisters);
  size_t spilling = llvm::count_if(
      kernels, [](const Kernel &k) { return k.spillStores || k.spillLoads; });
  int64_t shared = 0, stack = 0;
  for (const Kernel &k : kernels) {
    shared = std::max(shared, k.sharedBytes);
    stack = std::max(stack, k.stackBytes);
  }
  os << chip << " kernels (ptxas): " << kernels.size() << " in " << binaries
     << (binaries == 1 ? " binary" : " binaries")
     << "; registers per thread median " << registers[registers.size() / 2]
     << ", max " << most.registers << " (" << most.name << "); " << spilling
     << " spilling; shared memory max " << shared << " B; stack max " << stack
     << " B; every launch checked against the limits of " << chip;
}

} // namespace lmc
