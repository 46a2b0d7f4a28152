//===- trainer.cpp - The training step loop ------------------------------===//

#include "trainer.h"

#include "error.h"
#include "shuffle.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace lmc::rt {

Trainer::Trainer(const Descriptor &desc, const Config &config, StepFn trainStep,
                 ModelState &state, const Dataset &data,
                 const HyperParams &hyper, Evaluator *evaluator,
                 MetricsFile &metrics)
    : desc_(desc), config_(config), trainStep_(trainStep), state_(state),
      data_(data), hyper_(hyper), evaluator_(evaluator), metrics_(metrics),
      lossBuffer_(sizeof(float)) {
  for (const TensorSpec &arg : desc.trainArgs) {
    if (arg.role == Role::Input)
      inputBuffers_.emplace_back(arg.byteSize());
    if (arg.role == Role::Hyper)
      hyperBuffers_.emplace_back(arg.byteSize());
  }
}

std::vector<void *> Trainer::stepBuffers() {
  std::vector<void *> buffers;
  size_t input = 0, hyper = 0;
  for (const TensorSpec &arg : desc_.trainArgs) {
    switch (arg.role) {
    case Role::Param:
      buffers.push_back(
          state_.param(size_t(state_.paramIndex(arg.name))).data());
      break;
    case Role::State:
      buffers.push_back(
          state_.state(size_t(state_.stateIndex(arg.name))).data());
      break;
    case Role::Input:
      buffers.push_back(inputBuffers_[input++].data());
      break;
    default:
      buffers.push_back(hyperBuffers_[hyper++].data());
      break;
    }
  }
  // Results are matched to args by name (parseDescriptor checked each has
  // one), so their order need not mirror the args.
  for (const TensorSpec &res : desc_.trainResults) {
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
      buffers.push_back(lossBuffer_.data());
      break;
    }
  }
  return buffers;
}

void Trainer::evaluate(int64_t stepsDone) {
  EvalMetrics m = evaluator_->run(state_);
  m.step = stepsDone;
  std::printf("%s\n", formatEvalLine(m).c_str());
  metrics_.write(evalJson(m));
}

void Trainer::run() {
  using Clock = std::chrono::steady_clock;
  const int64_t batch = desc_.batchSize;
  SampleOrder order(data_.numSamples(), config_.shuffle, config_.seed);
  std::vector<int64_t> samples(static_cast<size_t>(batch));
  std::vector<const TensorSpec *> hypers = desc_.trainArgsWithRole(Role::Hyper);

  auto windowStart = Clock::now();
  int64_t windowSteps = 0;
  for (int64_t step = 1; step <= config_.steps; ++step) {
    for (int64_t i = 0; i < batch; ++i)
      samples[size_t(i)] = order.sampleAt((step - 1) * batch + i);
    data_.fillBatch(samples, inputBuffers_);
    for (size_t h = 0; h < hypers.size(); ++h)
      *hyperBuffers_[h].as<float>() =
          float(hyperValue(hypers[h]->name, step, hyper_));

    std::vector<void *> buffers = stepBuffers();
    trainStep_(buffers.data());
    state_.swap();
    ++windowSteps;

    const double loss = *lossBuffer_.as<float>();
    LMC_CHECK(std::isfinite(loss), "loss is ", loss, " at step ", step,
              " (lower --lr, or check the input data)");

    if (step == 1 || step % config_.logEvery == 0 || step == config_.steps) {
      const double seconds =
          std::chrono::duration<double>(Clock::now() - windowStart).count();
      StepMetrics m;
      m.step = step;
      m.loss = loss;
      m.lr = hyper_.lr;
      m.ms = 1000.0 * seconds / double(windowSteps);
      m.samplesPerS = seconds > 0 ? double(batch * windowSteps) / seconds : 0.0;
      std::printf("%s\n", formatStepLine(m, config_.steps).c_str());
      std::fflush(stdout);
      metrics_.write(stepJson(m));
      windowStart = Clock::now();
      windowSteps = 0;
    }
    if (evaluator_ && config_.evalEvery > 0 && step % config_.evalEvery == 0 &&
        step != config_.steps) {
      evaluate(step);
      windowStart = Clock::now(); // keep eval time out of the step timing
    }
  }
  if (evaluator_)
    evaluate(config_.steps);
}

} // namespace lmc::rt
