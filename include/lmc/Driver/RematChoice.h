//===- RematChoice.h - The remat policy a budget allows ---------*- C++ -*-===//
//
// `lmc --activation-budget BYTES`: the activation-checkpointing policy that
// recomputes least among those whose estimated step activations fit.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_DRIVER_REMATCHOICE_H
#define LMC_DRIVER_REMATCHOICE_H

#include "lmc/Driver/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace lmc {

struct RematChoice {
  /// A --remat policy: none, selective, per-block or per-block:N.
  std::string policy;
  /// The step's activations under it, as lmc-plan-buffers will place them.
  uint64_t activationBytes = 0;
};

/// Tries none, selective, then per-block on the fewest leading segments
/// (per-block:N, N found by bisection between selective, which does not
/// fit, and per-block whole), each on a copy of `module` taken through the
/// optimizer phase with `training` (under a second on GPT-2 774M; the
/// weights are shared, not copied). With a mesh only `none` is tried
/// (remat is refused there). Failure: a trial's pipeline failed (its
/// diagnostics were emitted and `tooLarge` is empty) or no policy fits;
/// then `tooLarge` lists each policy tried with its estimate
/// ("none 1.2 GB, selective 800 MB, per-block 600 MB").
mlir::FailureOr<RematChoice> chooseRematPolicy(mlir::ModuleOp module,
                                               TrainingOptions training,
                                               uint64_t budget, bool meshed,
                                               std::string &tooLarge);

} // namespace lmc

#endif // LMC_DRIVER_REMATCHOICE_H
