//===- memory_budget.cpp - Will the model fit? ---------------------------===//

#include "model/memory_budget.h"

#include "base/error.h"
#include "base/format_bytes.h"

#include <algorithm>
#include <unistd.h>

namespace lmc::rt {

namespace {

uint64_t bytesOf(const std::vector<const TensorSpec *> &specs) {
  uint64_t bytes = 0;
  for (const TensorSpec *spec : specs)
    bytes += spec->byteSize();
  return bytes;
}

/// The bytes of the tensors of `specs` the steps do not update in place.
uint64_t doubleBufferedBytes(const Descriptor &desc,
                             const std::vector<const TensorSpec *> &specs) {
  uint64_t bytes = 0;
  for (const TensorSpec *spec : specs)
    if (!desc.inPlace.count(spec->name))
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
  need.frozen = bytesOf(desc.frozen());
  const std::vector<const TensorSpec *> states =
      desc.trainArgsWithRole(Role::State);
  need.states = bytesOf(states) / uint64_t(stateShards);
  // ZeRO-1 double-buffers its params arena and state ranges (chunk_step
  // writes apart from what it reads).
  need.secondCopies =
      stateShards > 1
          ? need.params + need.states
          : doubleBufferedBytes(desc, desc.params()) +
                bytesOf(desc.buffers()) + doubleBufferedBytes(desc, states);
  if (splitStep)
    need.gradients = need.params;
  // ZeRO-1 also lays the params end to end for the all-gather.
  if (stateShards > 1)
    need.gradients += bytesOf(desc.params());
  // The planned arenas are exact where the estimate predates fusion.
  uint64_t arena = desc.largestArena();
  need.activations = arena ? arena : desc.activationBytes;
  // A whole step (train_step) keeps every gradient in its arena until the
  // update, which needs their global norm first.
  if (!splitStep && stateShards == 1 && arena)
    need.stepGradients = std::min(arena, bytesOf(desc.params()));
  if (desc.remat)
    need.remat = desc.remat->policy;
  need.inputs = bytesOf(desc.trainArgsWithRole(Role::Input));
  for (const TensorSpec &arg : desc.evalArgs)
    if (arg.role == Role::Input)
      need.inputs += arg.byteSize();
  return need;
}

std::string describeParts(const MemoryNeed &need) {
  std::string parts = concat("parameters ", formatBytes(need.params));
  if (need.frozen)
    parts += concat(", frozen ", formatBytes(need.frozen));
  if (need.states)
    parts += concat(", optimizer state ", formatBytes(need.states));
  if (need.secondCopies)
    parts += concat(", second copies of what a step does not update in "
                    "place ",
                    formatBytes(need.secondCopies));
  if (need.gradients)
    parts += concat(", gradients ", formatBytes(need.gradients));
  if (need.stepGradients)
    parts += concat(", gradients ", formatBytes(need.stepGradients),
                    ", activations ",
                    formatBytes(need.activations - need.stepGradients));
  else
    parts += concat(", step memory ", formatBytes(need.activations));
  parts += need.remat.empty() ? std::string(" (no --remat)")
                              : concat(" (--remat ", need.remat, ")");
  return parts + concat(", input batches ", formatBytes(need.inputs));
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
  // Activation checkpointing is the first thing to try where it is off.
  const char *advice =
      need.remat.empty()
          ? "compile it with --remat per-block or --activation-budget BYTES "
            "(activation checkpointing: activations recomputed in the "
            "backward pass instead of kept), or with a smaller --batch, or "
            "set --memory-budget"
          : "compile it with a smaller --batch, or set --memory-budget";
  throw Error(concat("the model needs an estimated ", describe(need.total()),
                     " (", describeParts(need), ") but the memory budget is ",
                     describe(budget), " (", budgetSource, "); ", advice));
}

} // namespace lmc::rt
