//===- split_step.h - Gradient accumulation and data-parallel averaging --===//
//
// One optimizer step as the compiled grad_step and apply_step
// (docs/runtime-abi.md): grad_step runs once per micro-batch; the gradients
// and losses are summed, all-reduced over the processes, divided by the
// number of micro-batches in the job, and handed to apply_step. The update
// then equals one fused train_step on the concatenated batch, up to float
// rounding in the averaging. Every gradient lives in one contiguous arena:
// with one micro-batch per process its buckets are all-reduced while
// grad_step still runs (gradient_buckets.h); otherwise it is one
// collective after the last micro-batch.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_SPLIT_STEP_H
#define LMC_RUNTIME_SPLIT_STEP_H

#include "comm/comm.h"
#include "comm/gradient_buckets.h"
#include "memory/buffer.h"
#include "model/compiled_model.h"
#include "model/descriptor.h"
#include "model/gradient_arena.h"
#include "model/model_state.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace lmc::rt {

class ShardedOptimizer;

/// Copies rank 0's model buffers to every process: each data-parallel step
/// continues from rank 0's running statistics, as PyTorch's DDP does with
/// broadcast_buffers (its default).
void broadcastBuffers(Communicator &comm, ModelState &state);

class SplitStep {
public:
  /// `microBatches`: grad_step calls per process and optimizer step;
  /// `rngKey`: the i64 the caller sets to each micro-batch's random key
  /// (grad_step's `hyper rng_key`, when it has one).
  /// With sharded state (ZeRO-1) the update is `chunkStep`'s, through a
  /// ShardedOptimizer.
  /// `bucketBytes`: the size at which a gradient bucket closes.
  SplitStep(const Descriptor &desc, StepFn gradStep, StepFn applyStep,
            StepFn chunkStep, ModelState &state, Communicator &comm,
            int64_t microBatches, void *rngKey, size_t bucketBytes);
  ~SplitStep();

  struct Outcome {
    double loss = 0;                 // mean over every micro-batch of the job
    std::optional<double> gradNorm;  // from apply_step, when it returns one
    bool stopRequested = false;      // by any process
  };

  /// `fillInputs(k)` writes micro-batch k into `inputs` (the train inputs in
  /// descriptor order) and its random key; `hypers` are the step's hyper
  /// buffers (apply_step's, in order). apply_step
  /// writes the next params/state; the caller swaps them in.
  Outcome run(const std::function<void(int64_t)> &fillInputs,
              std::vector<AlignedBuffer> &inputs,
              std::vector<AlignedBuffer> &hypers, bool stopRequested);

private:
  std::vector<void *> gradStepBuffers(float *grads,
                                      std::vector<AlignedBuffer> &inputs);
  std::vector<void *> applyStepBuffers(std::vector<AlignedBuffer> &hypers);
  /// Where the gradient `grad` (named like its param) lives in `arena`.
  void *gradBuffer(float *arena, const TensorSpec &grad);

  const Descriptor &desc_;
  StepFn gradStep_, applyStep_;
  ModelState &state_;
  Communicator &comm_;
  int64_t microBatches_;
  void *rngKey_;
  GradientArena layout_;
  AlignedBuffer sum_, scratch_, loss_, gradNorm_;
  std::unique_ptr<ShardedOptimizer> sharded_; // with ZeRO-1
  std::unique_ptr<GradientBuckets> buckets_;  // reduced during grad_step
  bool bucketsReported_ = false;

};

} // namespace lmc::rt

#endif // LMC_RUNTIME_SPLIT_STEP_H
