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
  apply("loss", training.loss.loss, settings.loss);
  LmcOptimizerOptions &optimizer = training.optimizer;
  apply("optimizer", optimizer.optimizer, settings.optimizer);
  apply("lr", optimizer.lr, settings.lr);
  apply("momentum", optimizer.momentum, settings.momentum);
  apply("beta1", optimizer.beta1, settings.beta1);
  apply("beta2", optimizer.beta2, settings.beta2);
  apply("eps", optimizer.eps, settings.eps);
  apply("weight-decay", optimizer.weightDecay, settings.weightDecay);
  apply("clip-grad-norm", optimizer.clipGradNorm, settings.clipGradNorm);
  apply("precision", training.precision.precision, settings.precision);
}

} // namespace lmc
