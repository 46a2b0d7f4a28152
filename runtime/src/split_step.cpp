//===- split_step.cpp - Gradient accumulation and data-parallel averaging -===//

#include "split_step.h"

#include "error.h"

namespace lmc::rt {

namespace {
constexpr size_t kFloatsPerLine = AlignedBuffer::kAlignment / sizeof(float);

size_t roundUpToLine(size_t floats) {
  return (floats + kFloatsPerLine - 1) / kFloatsPerLine * kFloatsPerLine;
}
} // namespace

SplitStep::SplitStep(const Descriptor &desc, StepFn gradStep,
                     StepFn applyStep, ModelState &state, Communicator &comm,
                     int64_t microBatches)
    : desc_(desc), gradStep_(gradStep), applyStep_(applyStep), state_(state),
      comm_(comm), microBatches_(microBatches), loss_(sizeof(float)),
      gradNorm_(sizeof(float)) {
  LMC_CHECK(desc.hasSplitStep() && gradStep && applyStep,
            "this executable has no grad_step/apply_step (compiled by an "
            "older lmc?): it cannot accumulate gradients or run with several "
            "processes");
  size_t offset = 0;
  for (const TensorSpec *param : state.params()) {
    LMC_CHECK(param->dtype == DType::F32, "parameter '", param->name,
              "' is not f32");
    gradOffsets_.push_back(offset);
    offset += roundUpToLine(size_t(param->numElements()));
  }
  lossSlot_ = offset;
  stopSlot_ = offset + 1;
  arenaFloats_ = offset + 2;
  sum_ = AlignedBuffer(arenaFloats_ * sizeof(float));
  if (microBatches_ > 1)
    scratch_ = AlignedBuffer(arenaFloats_ * sizeof(float));
}

std::vector<void *>
SplitStep::gradStepBuffers(float *grads, std::vector<AlignedBuffer> &inputs) {
  std::vector<void *> buffers;
  size_t input = 0;
  for (const TensorSpec &arg : desc_.gradArgs)
    buffers.push_back(
        arg.role == Role::Param
            ? state_.param(size_t(state_.paramIndex(arg.name))).data()
            : inputs[input++].data());
  for (const TensorSpec &res : desc_.gradResults)
    buffers.push_back(
        res.role == Role::Grad
            ? static_cast<void *>(
                  grads + gradOffsets_[size_t(state_.paramIndex(res.name))])
            : loss_.data());
  return buffers;
}

std::vector<void *>
SplitStep::applyStepBuffers(std::vector<AlignedBuffer> &hypers) {
  std::vector<void *> buffers;
  size_t hyper = 0;
  float *grads = sum_.as<float>();
  for (const TensorSpec &arg : desc_.applyArgs) {
    switch (arg.role) {
    case Role::Param:
      buffers.push_back(state_.param(size_t(state_.paramIndex(arg.name))).data());
      break;
    case Role::State:
      buffers.push_back(state_.state(size_t(state_.stateIndex(arg.name))).data());
      break;
    case Role::Grad:
      buffers.push_back(grads + gradOffsets_[size_t(state_.paramIndex(arg.name))]);
      break;
    default:
      buffers.push_back(hypers[hyper++].data());
      break;
    }
  }
  for (const TensorSpec &res : desc_.applyResults) {
    switch (res.role) {
    case Role::Param:
      buffers.push_back(
          state_.nextParam(size_t(state_.paramIndex(res.name))).data());
      break;
    case Role::State:
      buffers.push_back(
          state_.nextState(size_t(state_.stateIndex(res.name))).data());
      break;
    default:
      buffers.push_back(gradNorm_.data());
      break;
    }
  }
  return buffers;
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
    gradStep_(buffers.data());
    lossSum += double(*loss_.as<float>());
    if (k > 0)
      for (size_t i = 0; i < lossSlot_; ++i)
        sum[i] += target[i];
  }
  sum[lossSlot_] = float(lossSum);
  sum[stopSlot_] = stopRequested ? 1.0f : 0.0f;
  comm_.allReduceSum(sum, arenaFloats_);

  Outcome outcome;
  const int64_t jobMicroBatches = microBatches_ * comm_.size();
  outcome.loss = double(sum[lossSlot_]) / double(jobMicroBatches);
  outcome.stopRequested = sum[stopSlot_] > 0;
  if (jobMicroBatches > 1) {
    const float count = float(jobMicroBatches);
    for (size_t i = 0; i < lossSlot_; ++i)
      sum[i] /= count;
  }

  std::vector<void *> buffers = applyStepBuffers(hypers);
  applyStep_(buffers.data());
  if (desc_.hasGradNorm())
    outcome.gradNorm = double(*gradNorm_.as<float>());
  return outcome;
}

} // namespace lmc::rt
