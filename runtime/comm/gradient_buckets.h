//===- gradient_buckets.h - Gradients all-reduced while backward goes on --===//
//
// Data parallelism's gradient buckets, as PyTorch DDP's: runs of whole
// gradients of the arena, made from its end (grad_step finishes the last
// layers' gradients first), each all-reduced as soon as all its gradients
// are final — the compiled step says so through lmc_rt_gradient_ready
// (lmc-mark-gradients-ready) — while the backward pass goes on. On a GPU
// the reductions run on NCCL beside the kernels; with MPI they progress in
// later MPI calls.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_GRADIENT_BUCKETS_H
#define LMC_RUNTIME_GRADIENT_BUCKETS_H

#include "comm/comm.h"
#include "model/gradient_arena.h"

#include <cstddef>
#include <exception>
#include <memory>
#include <vector>

namespace lmc::rt {

class GradientBuckets {
public:
  /// `gradientParams[k]`: the param (index into `layout`) of grad_step's
  /// gradient k. A bucket closes once it holds `bucketFloats` or more. The
  /// gradients go to `arena` (laid out as `layout`), reduced over `comm`.
  GradientBuckets(const GradientArena &layout,
                  std::vector<size_t> gradientParams, size_t bucketFloats,
                  float *arena, Communicator &comm);

  /// A step begins: every bucket waits for all of its gradients.
  void begin();
  /// Gradient k is final: its bucket starts when it was the last one.
  void ready(size_t gradient);
  /// Keeps an error of ready() (called from the compiled step, which
  /// cannot unwind) for finish(); nothing more starts before.
  void fail(std::exception_ptr error) { error_ = error; }
  /// Starts the buckets that have not started, waits for every one; throws
  /// a kept error first.
  void finish();

  size_t size() const { return buckets_.size(); }
  /// Buckets of the last step started by ready() (not by finish()).
  size_t startedEarly() const { return startedEarly_; }

private:
  struct Bucket {
    size_t begin = 0, count = 0; // floats of the arena
    size_t gradients = 0;        // that must be ready
    size_t waiting = 0;          // of them, this step
    std::unique_ptr<PendingCollective> pending;
  };
  void start(Bucket &bucket);

  std::vector<Bucket> buckets_;
  std::vector<size_t> bucketOfGradient_;
  std::exception_ptr error_;
  float *arena_;
  Communicator &comm_;
  size_t startedEarly_ = 0;
};

/// The buckets whose ready() the compiled step's lmc_rt_gradient_ready
/// calls reach while a data-parallel grad_step runs (none otherwise).
void setActiveGradientBuckets(GradientBuckets *buckets);

} // namespace lmc::rt

#endif // LMC_RUNTIME_GRADIENT_BUCKETS_H
