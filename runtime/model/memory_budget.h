//===- memory_budget.h - Will the model fit? -----------------------------===//
//
// Before allocating anything, the runtime estimates the bytes a run needs
// and refuses one that exceeds the memory budget (--memory-budget, else the
// machine's physical memory shared by the processes on it) with the
// breakdown, instead of being killed by the OOM killer hours in.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_MEMORY_BUDGET_H
#define LMC_RUNTIME_MEMORY_BUDGET_H

#include "model/descriptor.h"

#include <cstdint>
#include <string>

namespace lmc::rt {

struct MemoryNeed {
  uint64_t params = 0;       // and model buffers
  uint64_t frozen = 0;       // frozen tensors (lmc --lora's base), one copy
  uint64_t states = 0;       // optimizer state (this process's share)
  uint64_t secondCopies = 0; // of the params, states and buffers a step
                             // does not update in place (double-buffered)
  uint64_t gradients = 0;    // the accumulation arena (split step only)
                             // and ZeRO-1's params arena
  uint64_t activations = 0;  // the planned arena, else the estimate
  uint64_t stepGradients = 0; // of `activations`: the gradients a whole
                              // step keeps until its update reads them
  uint64_t inputs = 0;       // one train batch and one eval batch
  std::string remat;         // the compiled --remat policy ("": none)

  uint64_t total() const {
    return params + frozen + states + secondCopies + gradients +
           activations + inputs;
  }
};

/// "parameters 475 MiB, optimizer state 950 MiB, ...": each nonzero part;
/// the step memory as gradients and activations where it holds both, with
/// the --remat policy that sized the activations.
std::string describeParts(const MemoryNeed &need);

/// The estimate for `desc`; `splitStep`: the run accumulates gradients in
/// an arena (--grad-accum > 1 or several processes); `stateShards`: the
/// processes ZeRO-1 shards the optimizer state over (1: none).
MemoryNeed estimateMemory(const Descriptor &desc, bool splitStep,
                          int64_t stateShards = 1);

/// Physical memory of this machine in bytes (0 if unknown).
uint64_t physicalMemory();

/// Throws Error with the breakdown when need.total() > budget.
/// `budgetSource` says where the budget came from, for the message.
void checkMemoryBudget(const MemoryNeed &need, uint64_t budget,
                       const std::string &budgetSource);

} // namespace lmc::rt

#endif // LMC_RUNTIME_MEMORY_BUDGET_H
