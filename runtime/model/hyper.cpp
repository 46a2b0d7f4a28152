//===- hyper.cpp - Per-step hyper scalars --------------------------------===//

#include "model/hyper.h"

#include "base/error.h"

#include <cmath>

namespace lmc::rt {

HyperParams resolveHyperParams(const Descriptor &desc,
                               std::optional<double> lrOverride,
                               std::optional<double> clipOverride) {
  HyperParams hp;
  std::optional<double> lr = lrOverride ? lrOverride : desc.hparam("lr");
  hp.lr = lr.value_or(0);
  hp.beta1 = desc.hparam("beta1").value_or(0);
  hp.beta2 = desc.hparam("beta2").value_or(0);
  hp.maxGradNorm =
      clipOverride ? *clipOverride : desc.hparam("clip_grad_norm").value_or(0);
  LMC_CHECK(hp.maxGradNorm >= 0, "model descriptor: hparam clip_grad_norm ",
            "must be >= 0");
  LMC_CHECK(!clipOverride || *clipOverride == 0 ||
                desc.hasHyper("max_grad_norm"),
            "--clip-grad-norm: this model was compiled without gradient "
            "clipping (no 'max_grad_norm' hyper); recompile it with clipping");
  for (const TensorSpec *hyper : desc.trainArgsWithRole(Role::Hyper)) {
    LMC_CHECK(lr, "the model needs a learning rate: pass --lr (the "
                  "descriptor has no 'hparam lr')");
    if (hyper->name == "adam_step_size")
      LMC_CHECK(desc.hparam("beta1") && hp.beta1 < 1,
                "model descriptor: adam_step_size needs 'hparam beta1' < 1");
    if (hyper->name == "adam_bc2_sqrt")
      LMC_CHECK(desc.hparam("beta2") && hp.beta2 < 1,
                "model descriptor: adam_bc2_sqrt needs 'hparam beta2' < 1");
  }
  return hp;
}

namespace {

uint64_t splitmix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace

int64_t rngKey(uint64_t seed, int64_t t, int64_t microBatch) {
  return int64_t(
      splitmix(splitmix(splitmix(seed) ^ uint64_t(t)) ^ uint64_t(microBatch)));
}

double hyperValue(const std::string &name, int64_t t, const HyperParams &hp) {
  if (name == "lr")
    return hp.lr;
  if (name == "adam_step_size")
    return hp.lr / (1.0 - std::pow(hp.beta1, double(t)));
  if (name == "adam_bc2_sqrt")
    return std::sqrt(1.0 - std::pow(hp.beta2, double(t)));
  if (name == "max_grad_norm")
    return hp.maxGradNorm;
  throw Error(concat("unknown hyper '", name, "'"));
}

} // namespace lmc::rt
