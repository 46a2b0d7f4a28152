//===- zero.h - ZeRO-1: optimizer state sharded over the processes --------===//
//
// ZeRO stage 1 (Rajbhandari et al., "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models", 2020). The gradient arena is cut
// into one range of whole lines per data-parallel process. A step
// reduce-scatters the summed gradients, so each process receives the sum
// over the job of its own range only; it clips with the global norm (the
// ranges' sums of squares, added up by one small all-reduce), runs the
// compiled chunk_step over its range and all-gathers the updated
// parameters. Each process stores the optimizer state of its range only.
// A reduce-scatter and an all-gather move what one all-reduce moves.
// Tensor parallel, the processes are a data group and the arena holds
// their model slices; the norm's split part is also summed over the model
// group.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_ZERO_H
#define LMC_RUNTIME_ZERO_H

#include "comm/comm.h"
#include "io/safetensors.h"
#include "memory/buffer.h"
#include "model/compiled_model.h"
#include "model/descriptor.h"
#include "model/gradient_arena.h"
#include "model/model_state.h"

#include <vector>

namespace lmc::rt {

/// Floats of each process's range of an arena of `floats` (whole lines):
/// the lines split as evenly as they go, in rank order.
std::vector<size_t> zeroRangeSizes(size_t floats, int processes);

/// Process `rank`'s shard among `processes` of the params' arena, with the
/// state slots of the model's chunk_step.
StateShard zeroShard(const Descriptor &desc, int rank, int processes);

/// Whole state tensors for a checkpoint, gathered from every process's
/// range (every process of `group` must call it). `storage` holds the
/// gathered bytes.
std::vector<TensorView> wholeShardedStates(ModelState &state,
                                           Communicator &group,
                                           std::vector<AlignedBuffer> &storage);

/// The optimizer update of a data-parallel step with sharded state.
class ShardedOptimizer {
public:
  /// `state` must hold a shard (zeroShard) of the processes of `comm`.
  ShardedOptimizer(const Descriptor &desc, StepFn chunkStep, ModelState &state,
                   Communicator &comm);

  /// `arena`: this process's summed gradients (GradientArena layout; it
  /// is overwritten). Sums them over the processes (each receives its
  /// range), divides by the job's `microBatches`, clips and updates this
  /// process's range into the next params and state, and gathers every
  /// range into the next params. `sums` (loss, stop flag) are summed over
  /// the processes with the squared norm. Returns the gradient norm before
  /// clipping. `hypers` are apply_step's (chunk_step takes the same).
  float step(float *arena, int64_t microBatches,
             std::vector<AlignedBuffer> &hypers, float *sums, size_t numSums);

private:
  /// Runs chunk_step on `count` floats of the range from `first`, with
  /// `grads` the range's gradients (a shorter last window goes through
  /// zero-padded copies).
  void updateWindow(size_t first, size_t count, float *grads,
                    std::vector<AlignedBuffer> &hypers);

  const StepFn chunkStep_;
  ModelState &state_;
  Communicator &comm_;
  const StateShard &shard_;
  const std::vector<size_t> rangeSizes_;
  const size_t chunk_;
  /// chunk_step's zero-padded inputs for a short window (param, slots,
  /// grad) and its results (param, slots).
  std::vector<AlignedBuffer> windowIn_, windowOut_;
  /// One window's argument pointers (reused across windows).
  std::vector<float *> windowInPtrs_, windowOutPtrs_;
  std::vector<void *> windowBuffers_;
  AlignedBuffer norm_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_ZERO_H
