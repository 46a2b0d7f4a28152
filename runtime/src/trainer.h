//===- trainer.h - The training step loop --------------------------------===//
#ifndef LMC_RUNTIME_TRAINER_H
#define LMC_RUNTIME_TRAINER_H

#include "config.h"
#include "dataset.h"
#include "descriptor.h"
#include "driver.h"
#include "eval.h"
#include "hyper.h"
#include "metrics.h"
#include "model_state.h"

#include <optional>

namespace lmc::rt {

/// Runs config.steps optimizer steps: assemble the batch, compute the hyper
/// scalars, call lmc_train_step, check the loss, swap the double buffers,
/// log, and evaluate when asked.
class Trainer {
public:
  Trainer(const Descriptor &desc, const Config &config, StepFn trainStep,
          ModelState &state, const Dataset &data, const HyperParams &hyper,
          Evaluator *evaluator, MetricsFile &metrics);

  void run();

private:
  /// Pointers for lmc_train_step: args then results, for the current
  /// buffers (rebuilt after every swap).
  std::vector<void *> stepBuffers();
  void evaluate(int64_t stepsDone);

  const Descriptor &desc_;
  const Config &config_;
  StepFn trainStep_;
  ModelState &state_;
  const Dataset &data_;
  HyperParams hyper_;
  Evaluator *evaluator_;
  MetricsFile &metrics_;
  std::vector<AlignedBuffer> inputBuffers_; // one per train input
  std::vector<AlignedBuffer> hyperBuffers_; // one per hyper arg
  AlignedBuffer lossBuffer_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_TRAINER_H
