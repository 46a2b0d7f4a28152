//===- hyper.h - Per-step hyper scalars ----------------------------------===//
#ifndef LMC_RUNTIME_HYPER_H
#define LMC_RUNTIME_HYPER_H

#include "descriptor.h"

#include <cstdint>
#include <optional>
#include <string>

namespace lmc::rt {

/// The constants the hyper scalars are computed from.
struct HyperParams {
  double lr = 0;
  double beta1 = 0;
  double beta2 = 0;
};

/// Resolves lr (--lr overrides the compiled default) and the Adam betas, and
/// checks that every `hyper` arg can be computed.
HyperParams resolveHyperParams(const Descriptor &desc,
                               std::optional<double> lrOverride);

/// The value of hyper `name` for 1-based step t, in double precision
/// (docs/runtime-abi.md): lr, adam_step_size = lr / (1 - beta1^t),
/// adam_bc2_sqrt = sqrt(1 - beta2^t).
double hyperValue(const std::string &name, int64_t t, const HyperParams &hp);

} // namespace lmc::rt

#endif // LMC_RUNTIME_HYPER_H
