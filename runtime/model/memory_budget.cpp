//===- memory_budget.cpp - Will the model fit? ---------------------------===//

#include "model/memory_budget.h"

#include "base/error.h"
#include "base/format_bytes.h"

#include <unistd.h>

namespace lmc::rt {

namespace {

uint64_t bytesOf(const std::vector<const TensorSpec *> &specs) {
  uint64_t bytes = 0;
  for (const TensorSpec *spec : specs)
    bytes += spec->byteSize();
  return bytes;
}

/// "1.5 GiB (1610612736 bytes)"
std::string describe(uint64_t bytes) {
  return concat(formatBytes(bytes), " (", bytes, " bytes)");
}

} // namespace

MemoryNeed estimateMemory(const Descriptor &desc, bool splitStep,
                          int64_t stateShards) {
  MemoryNeed need;
  // Model buffers (BatchNorm statistics) are double-buffered like params.
  need.params = bytesOf(desc.params()) + bytesOf(desc.buffers());
  need.states =
      bytesOf(desc.trainArgsWithRole(Role::State)) / uint64_t(stateShards);
  if (splitStep)
    need.gradients = need.params;
  // ZeRO-1 also lays the params end to end for the all-gather.
  if (stateShards > 1)
    need.gradients += bytesOf(desc.params());
  // The planned arenas are exact where the estimate predates fusion.
  uint64_t arena = desc.largestArena();
  need.activations = arena ? arena : desc.activationBytes;
  need.inputs = bytesOf(desc.trainArgsWithRole(Role::Input));
  for (const TensorSpec &arg : desc.evalArgs)
    if (arg.role == Role::Input)
      need.inputs += arg.byteSize();
  return need;
}

uint64_t physicalMemory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return uint64_t(pages) * uint64_t(pageSize);
}

void checkMemoryBudget(const MemoryNeed &need, uint64_t budget,
                       const std::string &budgetSource) {
  if (need.total() <= budget)
    return;
  std::string parts = concat("parameters 2 x ", formatBytes(need.params));
  if (need.states)
    parts += concat(", optimizer state 2 x ", formatBytes(need.states));
  if (need.gradients)
    parts += concat(", gradients ", formatBytes(need.gradients));
  parts += concat(", activations ", formatBytes(need.activations),
                  ", input batches ", formatBytes(need.inputs));
  throw Error(concat("the model needs an estimated ", describe(need.total()),
                     " (", parts, ") but the memory budget is ",
                     describe(budget), " (", budgetSource,
                     "); compile it with a smaller --batch, or set "
                     "--memory-budget"));
}

} // namespace lmc::rt
