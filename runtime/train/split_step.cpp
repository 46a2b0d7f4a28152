//===- split_step.cpp - Gradient accumulation and data-parallel averaging -===//

#include "train/split_step.h"

#include "base/error.h"
#include "comm/zero.h"
#include "memory/device_hooks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lmc::rt {

namespace {

// The gradient sums run where the gradients are: on the GPU in --target
// cuda executables (a host loop over managed memory would move every
// gradient to the host and back each step), here otherwise.

/// y[i] += x[i] for i < n.
void addInto(float *y, const float *x, size_t n) {
  if (lmc_rt_device_axpy_f32) {
    lmc_rt_device_axpy_f32(int64_t(n), 1.0f, x, y);
    lmc_rt_device_synchronize();
    return;
  }
  for (size_t i = 0; i < n; ++i)
    y[i] += x[i];
}

/// x[i] /= count for i < n (on the GPU: times 1/count, which may differ in
/// the last bit).
void divideBy(float *x, size_t n, float count) {
  if (lmc_rt_device_scale_f32) {
    lmc_rt_device_scale_f32(int64_t(n), 1.0f / count, x);
    lmc_rt_device_synchronize();
    return;
  }
  for (size_t i = 0; i < n; ++i)
    x[i] /= count;
}

} // namespace

void broadcastBuffers(Communicator &comm, ModelState &state) {
  if (comm.size() == 1)
    return;
  for (size_t i = 0; i < state.buffers().size(); ++i)
    comm.broadcast(state.bufferValue(i).data(), state.buffers()[i]->byteSize());
}

SplitStep::SplitStep(const Descriptor &desc, StepFn gradStep,
                     StepFn applyStep, StepFn chunkStep, ModelState &state,
                     Communicator &comm, int64_t microBatches, void *rngKey,
                     size_t bucketBytes)
    : desc_(desc), gradStep_(gradStep), applyStep_(applyStep), state_(state),
      comm_(comm), microBatches_(microBatches), rngKey_(rngKey),
      layout_(state.params()), loss_(sizeof(float)),
      gradNorm_(sizeof(float)) {
  LMC_CHECK(desc.hasSplitStep() && gradStep && applyStep,
            "this executable has no grad_step/apply_step (compiled by an "
            "older lmc?): it cannot accumulate gradients or run with several "
            "processes");
  for (const TensorSpec *param : state.params())
    LMC_CHECK(param->dtype == DType::F32, "parameter '", param->name,
              "' is not f32");
  sum_ = AlignedBuffer(layout_.floats * sizeof(float));
  if (microBatches_ > 1)
    scratch_ = AlignedBuffer(layout_.floats * sizeof(float));
  if (state.stateShard())
    sharded_ = std::make_unique<ShardedOptimizer>(desc, chunkStep, state, comm);
  if (comm.size() > 1 && comm.startsCollectives() && microBatches_ == 1 &&
      !sharded_) {
    std::vector<size_t> gradientParams;
    for (const TensorSpec &res : desc.gradResults)
      if (res.role == Role::Grad)
        gradientParams.push_back(size_t(state.paramIndex(res.name)));
    buckets_ = std::make_unique<GradientBuckets>(
        layout_, std::move(gradientParams),
        std::max<size_t>(bucketBytes / sizeof(float), 1), sum_.as<float>(),
        comm);
    // One bucket would start with the last gradient, after the backward
    // pass: one all-reduce with the loss after the step costs less.
    if (buckets_->size() < 2)
      buckets_.reset();
  }
}

SplitStep::~SplitStep() = default;

std::vector<void *>
SplitStep::gradStepBuffers(float *grads, std::vector<AlignedBuffer> &inputs) {
  std::vector<void *> buffers;
  size_t input = 0;
  for (const TensorSpec &arg : desc_.gradArgs) {
    if (void *b = state_.buffer(arg, /*next=*/false))
      buffers.push_back(b);
    else if (arg.role == Role::Hyper) // rng_key, the only one grad_step has
      buffers.push_back(rngKey_);
    else
      buffers.push_back(inputs[input++].data());
  }
  for (const TensorSpec &res : desc_.gradResults) {
    if (res.role == Role::Grad)
      buffers.push_back(gradBuffer(grads, res));
    else if (res.role == Role::Buffer)
      buffers.push_back(state_.buffer(res, /*next=*/true));
    else
      buffers.push_back(loss_.data());
  }
  return buffers;
}

std::vector<void *>
SplitStep::applyStepBuffers(std::vector<AlignedBuffer> &hypers) {
  std::vector<void *> buffers;
  size_t hyper = 0;
  for (const TensorSpec &arg : desc_.applyArgs) {
    if (void *b = state_.buffer(arg, /*next=*/false))
      buffers.push_back(b);
    else if (arg.role == Role::Grad)
      buffers.push_back(gradBuffer(sum_.as<float>(), arg));
    else
      buffers.push_back(hypers[hyper++].data());
  }
  for (const TensorSpec &res : desc_.applyResults) {
    void *b = state_.buffer(res, /*next=*/true);
    buffers.push_back(b ? b : gradNorm_.data());
  }
  return buffers;
}

void *SplitStep::gradBuffer(float *arena, const TensorSpec &grad) {
  return arena + layout_.offsets[size_t(state_.paramIndex(grad.name))];
}

SplitStep::Outcome SplitStep::run(const std::function<void(int64_t)> &fillInputs,
                                  std::vector<AlignedBuffer> &inputs,
                                  std::vector<AlignedBuffer> &hypers,
                                  bool stopRequested) {
  float *sum = sum_.as<float>();
  double lossSum = 0;
  for (int64_t k = 0; k < microBatches_; ++k) {
    fillInputs(k);
    // The first micro-batch writes the sum directly; later ones go through
    // the scratch arena and are added in.
    float *target = k == 0 ? sum : scratch_.as<float>();
    std::vector<void *> buffers = gradStepBuffers(target, inputs);
    if (buckets_) {
      buckets_->begin();
      setActiveGradientBuckets(buckets_.get());
    }
    gradStep_(buffers.data());
    setActiveGradientBuckets(nullptr);
    // Each micro-batch's forward updates the model buffers, as PyTorch's
    // does under gradient accumulation.
    state_.commitBuffers();
    lossSum += double(*loss_.as<float>());
    if (k > 0)
      addInto(sum, target, layout_.lossSlot);
  }
  sum[layout_.lossSlot] = float(lossSum);
  sum[layout_.stopSlot] = stopRequested ? 1.0f : 0.0f;
  Outcome outcome;
  const int64_t jobMicroBatches = microBatches_ * comm_.size();
  if (sharded_) {
    float *lossAndStop = sum + layout_.lossSlot;
    outcome.gradNorm =
        sharded_->step(sum, jobMicroBatches, hypers, lossAndStop, 2);
    broadcastBuffers(comm_, state_);
    outcome.loss = double(lossAndStop[0]) / double(jobMicroBatches);
    outcome.stopRequested = lossAndStop[1] > 0;
    return outcome;
  }
  if (buckets_) {
    buckets_->finish();
    comm_.allReduceSum(sum + layout_.lossSlot, 2);
    if (!bucketsReported_ && comm_.rank() == 0)
      std::printf("data parallel: gradients all-reduced in %zu buckets "
                  "(--bucket-mb), %zu started while grad_step ran\n",
                  buckets_->size(), buckets_->startedEarly());
    bucketsReported_ = true;
  } else {
    comm_.allReduceSum(sum, layout_.floats);
  }
  broadcastBuffers(comm_, state_);

  outcome.loss = double(sum[layout_.lossSlot]) / double(jobMicroBatches);
  outcome.stopRequested = sum[layout_.stopSlot] > 0;
  if (jobMicroBatches > 1)
    divideBy(sum, layout_.lossSlot, float(jobMicroBatches));
  // apply_step updates params and state in place and keeps them only when
  // the gradient norm is not finite; after a non-finite loss the trainer
  // stops or skips the step, so nothing may be updated.
  if (!std::isfinite(outcome.loss))
    return outcome;

  std::vector<void *> buffers = applyStepBuffers(hypers);
  applyStep_(buffers.data());
  if (desc_.hasGradNorm())
    outcome.gradNorm = double(*gradNorm_.as<float>());
  return outcome;
}

} // namespace lmc::rt
