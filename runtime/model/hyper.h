//===- hyper.h - Per-step hyper scalars ----------------------------------===//
#ifndef LMC_RUNTIME_HYPER_H
#define LMC_RUNTIME_HYPER_H

#include "model/descriptor.h"

#include <cstdint>
#include <optional>
#include <string>

namespace lmc::rt {

/// The constants the hyper scalars are computed from.
struct HyperParams {
  double lr = 0;
  double beta1 = 0;
  double beta2 = 0;
  double maxGradNorm = 0; // 0: no clipping
};

/// Resolves lr (--lr overrides the compiled default), the Adam betas and
/// the clipping threshold (--clip-grad-norm, else hparam clip_grad_norm,
/// else 0), and checks that every `hyper` arg can be computed.
HyperParams resolveHyperParams(const Descriptor &desc,
                               std::optional<double> lrOverride,
                               std::optional<double> clipOverride = {});

/// The value of hyper `name` for 1-based step t, in double precision
/// (docs/runtime-abi.md): lr, adam_step_size = lr / (1 - beta1^t),
/// adam_bc2_sqrt = sqrt(1 - beta2^t), max_grad_norm. `hp.lr` is the
/// learning rate of step t (the schedule's value).
double hyperValue(const std::string &name, int64_t t, const HyperParams &hp);

/// The `rng_key` hyper (an i64, not a float): the random key of the job's
/// micro-batch `microBatch` (rank x --grad-accum + k) of 1-based step t,
/// mix(mix(mix(seed) ^ t) ^ microBatch) with splitmix64's finalizer `mix`.
/// Every micro-batch of a job draws different numbers, the same ones
/// whatever the split over processes and accumulation.
int64_t rngKey(uint64_t seed, int64_t t, int64_t microBatch);

} // namespace lmc::rt

#endif // LMC_RUNTIME_HYPER_H
