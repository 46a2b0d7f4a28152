//===- trainer.h - The training step loop --------------------------------===//
#ifndef LMC_RUNTIME_TRAINER_H
#define LMC_RUNTIME_TRAINER_H

#include "cli/config.h"
#include "cli/metrics.h"
#include "cli/profile_report.h"
#include "comm/comm.h"
#include "io/tensorboard.h"
#include "model/compiled_model.h"
#include "model/descriptor.h"
#include "model/hyper.h"
#include "model/model_state.h"
#include "model/schedule.h"
#include "train/checkpoint.h"
#include "train/dataset.h"
#include "train/eval.h"
#include "train/shuffle.h"
#include "train/split_step.h"

#include <optional>

namespace lmc::rt {

/// Where a run reports to; every member is optional.
struct TrainerSinks {
  Evaluator *evaluator = nullptr;
  MetricsFile *metrics = nullptr;
  EventWriter *tensorboard = nullptr;
  Checkpointer *checkpoints = nullptr;
};

enum class RunEnd { Completed, Interrupted };

/// The compiled step functions (grad/apply may be null: older models;
/// chunk is null without ZeRO-1).
struct StepFns {
  StepFn train = nullptr, grad = nullptr, apply = nullptr, chunk = nullptr;
};

/// Runs optimizer steps up to config.steps (the run's total): assemble the
/// batch, compute the hyper scalars (lr from the schedule), call
/// lmc_train_step (or, with --grad-accum or several processes, grad_step per
/// micro-batch and apply_step: SplitStep), apply the non-finite policy, swap
/// the double buffers, log, evaluate and checkpoint when asked, and stop
/// cleanly on SIGTERM/SIGINT. With several processes every one runs the
/// steps; only rank 0 has sinks.
class Trainer {
public:
  Trainer(const Descriptor &desc, const Config &config, StepFns steps,
          Communicator &comm, ModelState &state, const BatchSource &data,
          const HyperParams &hyper, const Schedule &schedule,
          TrainerSinks sinks);

  /// Continue after the state of a checkpoint (already loaded into the
  /// ModelState). Throws if the data order cannot be reproduced.
  void resumeFrom(const CheckpointMeta &meta);
  /// The checkpoint metadata after `step` steps.
  CheckpointMeta checkpointMeta(int64_t step) const;

  RunEnd run();
  int64_t stepsDone() const { return stepsDone_; }
  /// The steps --profile timed: every step of the run after its first
  /// (which pays for first touches of the arena and the BLAS buffers), or
  /// the one step of a one-step run.
  const ProfiledSteps &profiledSteps() const { return profiled_; }

private:
  /// What one optimizer step returned.
  struct StepOutcome {
    double loss = 0;
    std::optional<double> gradNorm;
    /// A stop signal reached this process (or, with several, any process).
    bool stopRequested = false;
  };

  /// Writes the hyper scalars of `step` (lr from the schedule, Adam's bias
  /// corrections from the updates taken); returns its lr.
  double setHyperBuffers(int64_t step);
  /// Assembles micro-batch `k` of `step` and its random key.
  void fillMicroBatch(const SampleOrder &order, int64_t step, int64_t k);
  /// Runs the compiled step (or SplitStep's micro-batches and update),
  /// timed for --profile when `profiled`.
  StepOutcome runStep(const SampleOrder &order, int64_t step, bool profiled);
  /// Makes the step's results current, or applies the non-finite policy:
  /// a loss-scale overflow or --on-nonfinite skip drops the update, stop
  /// throws.
  void commitOrSkip(int64_t step, const StepOutcome &outcome);
  /// The step line on stdout, the JSONL metrics and TensorBoard scalars,
  /// timed over the `windowSteps` steps since the last report.
  void report(int64_t step, double lr, const StepOutcome &outcome,
              int64_t windowSteps, double windowSeconds);
  /// A checkpoint and the resume hint after a stop signal.
  RunEnd stopAfter(int64_t step);
  /// Pointers for lmc_train_step: args then results, for the current
  /// buffers (rebuilt after every swap).
  std::vector<void *> stepBuffers();
  void evaluate(int64_t stepsDone);
  /// "buffer 'NAME' holds nan" for the first f32 model buffer with a NaN or
  /// Inf, in the buffers a step writes (`next`) or the current ones.
  std::optional<std::string> nonFiniteBuffer(bool next);
  void saveCheckpoint(int64_t step);
  /// Samples consumed per optimizer step by the whole job.
  int64_t globalBatch() const;

  const Descriptor &desc_;
  const Config &config_;
  StepFns steps_;
  Communicator &comm_;
  /// With --grad-accum > 1, processes > 1 or sharded state (--zero 1).
  std::optional<SplitStep> split_;
  ModelState &state_;
  const BatchSource &data_;
  HyperParams hyper_;
  Schedule schedule_;
  TrainerSinks sinks_;
  std::vector<AlignedBuffer> inputBuffers_; // one per train input
  std::vector<const TensorSpec *> hyperSpecs_; // the hyper args but rng_key
  std::vector<AlignedBuffer> hyperBuffers_;    // one per hyperSpecs_
  std::vector<int64_t> samples_;            // the micro-batch's sample ids
  AlignedBuffer lossBuffer_, gradNormBuffer_;
  /// The micro-batch's random key (hyper rng_key; models with Dropout).
  AlignedBuffer rngKey_;
  /// Index of the state loss_scaler.scale, or -1 (no loss scaling).
  int lossScale_ = -1;
  /// The loss scale the next step uses.
  double currentLossScale();
  int64_t stepsDone_ = 0;
  /// The data cursor (samples drawn) at step `cursorStep_`: a resumed run
  /// continues from the checkpoint's cursor, whatever the samples per step
  /// were then (a different process count or --grad-accum).
  int64_t cursorBase_ = 0, cursorStep_ = 0;
  int64_t skippedSteps_ = 0;
  int64_t lastCheckpointStep_ = -1;
  ProfiledSteps profiled_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_TRAINER_H
