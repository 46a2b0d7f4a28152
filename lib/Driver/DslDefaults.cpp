//===- DslDefaults.cpp - A DSL train block as the compile's defaults ------===//
//
// The DSL importer reads the train block into DslTrainSettings; the options
// of the compile are the driver's (TrainingOptions), so the two meet here,
// above both.
//
//===----------------------------------------------------------------------===//

#include "lmc/Driver/Pipelines.h"
#include "lmc/Import/Dsl/Dsl.h"

using llvm::StringRef;

namespace lmc {

void applyDslTrainDefaults(const DslTrainSettings &settings,
                           TrainingOptions &training,
                           llvm::function_ref<bool(StringRef)> given) {
  auto apply = [&](StringRef flag, auto &slot, const auto &setting) {
    if (setting && !given(flag))
      slot = *setting;
  };
  apply("loss", training.loss, settings.loss);
  apply("optimizer", training.optimizer, settings.optimizer);
  apply("lr", training.lr, settings.lr);
  apply("momentum", training.momentum, settings.momentum);
  apply("beta1", training.beta1, settings.beta1);
  apply("beta2", training.beta2, settings.beta2);
  apply("eps", training.eps, settings.eps);
  apply("weight-decay", training.weightDecay, settings.weightDecay);
  apply("clip-grad-norm", training.clipGradNorm, settings.clipGradNorm);
  apply("precision", training.precision, settings.precision);
}

} // namespace lmc
