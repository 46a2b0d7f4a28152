//===- trainer.cpp - The training step loop ------------------------------===//

#include "train/trainer.h"

#include "base/error.h"
#include "train/shuffle.h"
#include "train/signals.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace lmc::rt {

Trainer::Trainer(const Descriptor &desc, const Config &config, StepFns steps,
                 Communicator &comm, ModelState &state, const BatchSource &data,
                 const HyperParams &hyper, const Schedule &schedule,
                 TrainerSinks sinks)
    : desc_(desc), config_(config), steps_(steps), comm_(comm), state_(state),
      data_(data), hyper_(hyper), schedule_(schedule), sinks_(sinks),
      lossBuffer_(sizeof(float)), gradNormBuffer_(sizeof(float)),
      rngKey_(sizeof(int64_t)) {
  if (config.gradAccum > 1 || comm.size() > 1 || state.stateShard())
    split_.emplace(desc, steps.grad, steps.apply, steps.chunk, state, comm,
                   config.gradAccum, rngKey_.data(),
                   size_t(config.bucketMb * 1e6));
  for (const TensorSpec &arg : desc.trainArgs) {
    if (arg.role == Role::Input)
      inputBuffers_.emplace_back(arg.byteSize());
    if (arg.role == Role::Hyper && arg.name != kRngKeyHyper) {
      hyperSpecs_.push_back(&arg);
      hyperBuffers_.emplace_back(arg.byteSize());
    }
  }
  lossScale_ = state.stateIndex(kLossScaleState);
}

double Trainer::currentLossScale() {
  return double(*state_.state(size_t(lossScale_)).as<float>());
}

std::vector<void *> Trainer::stepBuffers() {
  std::vector<void *> buffers;
  size_t input = 0, hyper = 0;
  for (const TensorSpec &arg : desc_.trainArgs) {
    if (void *b = state_.buffer(arg, /*next=*/false))
      buffers.push_back(b);
    else if (arg.role == Role::Input)
      buffers.push_back(inputBuffers_[input++].data());
    else if (arg.name == kRngKeyHyper)
      buffers.push_back(rngKey_.data());
    else
      buffers.push_back(hyperBuffers_[hyper++].data());
  }
  // Results are matched to args by name (parseDescriptor checked each has
  // one), so their order need not mirror the args.
  for (const TensorSpec &res : desc_.trainResults) {
    if (void *b = state_.buffer(res, /*next=*/true))
      buffers.push_back(b);
    else
      buffers.push_back(res.role == Role::GradNorm ? gradNormBuffer_.data()
                                                   : lossBuffer_.data());
  }
  return buffers;
}

void Trainer::resumeFrom(const CheckpointMeta &meta) {
  LMC_CHECK(meta.step <= config_.steps, "the checkpoint is at step ", meta.step,
            " but --steps is ", config_.steps,
            " (--steps is the run's total, not the steps to add)");
  LMC_CHECK(meta.numSamples == data_.numSamples(), "the checkpoint was "
            "written with ", meta.numSamples, " training samples, the data "
            "now has ", data_.numSamples(), "; resuming would not reproduce "
            "the data order");
  LMC_CHECK(meta.shuffle == config_.shuffle && meta.seed == config_.seed,
            "the checkpoint was written with ",
            meta.shuffle ? "--shuffle" : "no --shuffle", " and --seed ",
            meta.seed, "; pass the same flags to resume");
  if (meta.shuffle && meta.shuffleOrder != kShuffleOrder)
    std::printf("note: the checkpoint's run shuffled in another order (%s; "
                "this lmc: %s): the samples of its current epoch not drawn "
                "yet are not those this run draws for the rest of it\n",
                meta.shuffleOrder.c_str(), kShuffleOrder);
  if (meta.dataCursor != meta.step * globalBatch())
    std::printf("note: the checkpoint's run drew %lld samples in %lld steps; "
                "this one draws %lld per step (batch %lld x --grad-accum "
                "%lld x %d processes), continuing from sample %lld\n",
                (long long)meta.dataCursor, (long long)meta.step,
                (long long)globalBatch(), (long long)desc_.batchSize,
                (long long)config_.gradAccum, comm_.size(),
                (long long)meta.dataCursor);
  cursorBase_ = meta.dataCursor;
  cursorStep_ = meta.step;
  if (schedule_.kind != ScheduleKind::Constant &&
      meta.totalSteps != schedule_.totalSteps)
    std::printf("note: the checkpoint's %s schedule spans %lld steps, this "
                "run's spans %lld (use --schedule-steps to keep it)\n",
                meta.schedule.c_str(), (long long)meta.totalSteps,
                (long long)schedule_.totalSteps);
  stepsDone_ = meta.step;
  skippedSteps_ = meta.skippedSteps;
  lastCheckpointStep_ = meta.step;
}

CheckpointMeta Trainer::checkpointMeta(int64_t step) const {
  CheckpointMeta meta;
  meta.step = step;
  meta.dataCursor = cursorBase_ + (step - cursorStep_) * globalBatch();
  meta.numSamples = data_.numSamples();
  meta.seed = config_.seed;
  meta.shuffle = config_.shuffle;
  meta.skippedSteps = skippedSteps_;
  meta.schedule = scheduleKindName(schedule_.kind);
  meta.lr = schedule_.lr;
  meta.lrMin = schedule_.lrMin;
  meta.warmup = schedule_.warmup;
  meta.totalSteps = schedule_.totalSteps;
  return meta;
}

int64_t Trainer::globalBatch() const {
  return desc_.batchSize * config_.gradAccum * comm_.size();
}

void Trainer::saveCheckpoint(int64_t step) {
  if (!sinks_.checkpoints || lastCheckpointStep_ == step)
    return;
  std::string path = sinks_.checkpoints->save(state_, checkpointMeta(step));
  lastCheckpointStep_ = step;
  std::printf("checkpoint: %s (%.1f ms)\n", path.c_str(),
              sinks_.checkpoints->lastSaveMs());
  std::fflush(stdout);
}

std::optional<std::string> Trainer::nonFiniteBuffer(bool next) {
  for (const TensorSpec *spec : state_.buffers()) {
    if (spec->dtype != DType::F32)
      continue; // BatchNorm's num_batches_tracked counts in int64
    const auto *values = static_cast<const float *>(state_.buffer(*spec, next));
    for (int64_t i = 0; i < spec->numElements(); ++i)
      if (!std::isfinite(values[i]))
        return concat("buffer '", spec->name, "' holds ", values[i]);
  }
  return std::nullopt;
}

void Trainer::evaluate(int64_t stepsDone) {
  EvalMetrics m = sinks_.evaluator->run(state_);
  m.step = stepsDone;
  std::printf("%s\n", formatEvalLine(m).c_str());
  // As for a training loss: --on-nonfinite stop ends the run (the metrics
  // keep the line, its loss null), skip reports it and trains on.
  const bool finite = std::isfinite(m.loss);
  if (!finite && config_.onNonFinite == NonFinitePolicy::Skip)
    std::printf("eval: loss is %g after step %lld; training goes on "
                "(--on-nonfinite skip)\n",
                m.loss, (long long)stepsDone);
  if (sinks_.metrics)
    sinks_.metrics->write(evalJson(m));
  if (EventWriter *tb = sinks_.tensorboard) {
    tb->scalar("eval_loss", stepsDone, m.loss);
    if (m.correct && m.samples > 0)
      tb->scalar("eval_accuracy", stepsDone,
                 double(*m.correct) / double(m.samples));
    tb->flush();
  }
  LMC_CHECK(finite || config_.onNonFinite != NonFinitePolicy::Stop,
            "eval loss is ", m.loss, " after step ", stepsDone,
            " (the parameters or buffers, or the eval data, hold NaN or "
            "Inf; --on-nonfinite skip reports it and trains on)");
}

double Trainer::setHyperBuffers(int64_t step) {
  HyperParams stepHyper = hyper_;
  stepHyper.lr = schedule_.lrAt(step);
  // Adam's bias corrections count the updates taken, as torch.optim's
  // state["step"] does (a skipped step does not advance it); the schedule
  // follows the global step.
  const int64_t updates = step - skippedSteps_;
  for (size_t h = 0; h < hyperSpecs_.size(); ++h)
    *hyperBuffers_[h].as<float>() =
        float(hyperValue(hyperSpecs_[h]->name, updates, stepHyper));
  return stepHyper.lr;
}

void Trainer::fillMicroBatch(const SampleOrder &order, int64_t step,
                             int64_t k) {
  // Micro-batch k of this process takes the job's micro-batch
  // rank * accum + k of the step's samples.
  const int64_t batch = desc_.batchSize;
  const int64_t first = cursorBase_ + (step - 1 - cursorStep_) * globalBatch() +
                        (comm_.rank() * config_.gradAccum + k) * batch;
  samples_.resize(size_t(batch));
  for (int64_t i = 0; i < batch; ++i)
    samples_[size_t(i)] = order.sampleAt(first + i);
  data_.fillBatch(samples_, inputBuffers_);
  *rngKey_.as<int64_t>() =
      rngKey(config_.seed, step, comm_.rank() * config_.gradAccum + k);
}

Trainer::StepOutcome Trainer::runStep(const SampleOrder &order, int64_t step,
                                      bool profiled) {
  using Clock = std::chrono::steady_clock;
  StepOutcome out;
  // Processes must stop at the same step: the stop request travels with
  // the gradients.
  out.stopRequested = StopSignals::received() != 0;
  if (profiled) {
    startProfiling(desc_.profileRegions.size());
    if (profiled_.first == 0)
      profiled_.first = step;
  }
  const auto stepStart = Clock::now();
  if (split_) {
    SplitStep::Outcome outcome =
        split_->run([&](int64_t k) { fillMicroBatch(order, step, k); },
                    inputBuffers_, hyperBuffers_, out.stopRequested);
    out.loss = outcome.loss;
    out.gradNorm = outcome.gradNorm;
    out.stopRequested = outcome.stopRequested;
  } else {
    fillMicroBatch(order, step, 0);
    std::vector<void *> buffers = stepBuffers();
    steps_.train(buffers.data());
    out.loss = *lossBuffer_.as<float>();
    if (desc_.hasGradNorm())
      out.gradNorm = *gradNormBuffer_.as<float>();
  }
  if (profiled) {
    stopProfiling();
    profiled_.ns +=
        uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                     Clock::now() - stepStart)
                     .count());
    profiled_.last = step;
  }
  if (comm_.size() == 1) // a signal during the step counts at once
    out.stopRequested = StopSignals::received() != 0;
  return out;
}

void Trainer::commitOrSkip(int64_t step, const StepOutcome &outcome) {
  // A model buffer (BatchNorm's running statistics) the step wrote with a
  // NaN or Inf poisons every later evaluation: a non-finite step like the
  // others. The single-step path wrote it beside the current one; the
  // split step (accumulation, several processes) committed it already.
  const std::optional<std::string> badBuffer =
      nonFiniteBuffer(/*next=*/!split_);
  if (badBuffer && split_)
    throw Error(concat(*badBuffer, " after step ", step,
                       " (lower --lr, or check the input data; with "
                       "--grad-accum or several processes the update of a "
                       "buffer cannot be skipped)"));
  const std::optional<double> &gradNorm = outcome.gradNorm;
  const bool finite = std::isfinite(outcome.loss) &&
                      (!gradNorm || std::isfinite(*gradNorm)) && !badBuffer;
  // With dynamic loss scaling the compiled step itself kept the params and
  // state of a step with a non-finite gradient and halved the scale.
  const bool overflow =
      lossScale_ >= 0 && gradNorm && !std::isfinite(*gradNorm);
  if (finite || overflow)
    state_.swap();
  if (overflow) {
    ++skippedSteps_;
    const double scale = currentLossScale();
    std::printf("step %lld: gradient overflow, update skipped, loss scale "
                "now %g (%lld skipped so far)\n",
                (long long)step, scale, (long long)skippedSteps_);
    if (sinks_.metrics)
      sinks_.metrics->write(skippedStepJson(step, skippedSteps_, scale));
    return;
  }
  if (finite)
    return;
  const std::string what = !std::isfinite(outcome.loss)
                               ? concat("loss is ", outcome.loss)
                           : badBuffer ? *badBuffer
                                       : concat("gradient norm is ", *gradNorm);
  if (config_.onNonFinite == NonFinitePolicy::Stop) {
    const std::string last =
        sinks_.checkpoints ? sinks_.checkpoints->lastPath() : "";
    throw Error(concat(what, " at step ", step,
                       " (lower --lr, or check the input data)",
                       last.empty() ? std::string("; no checkpoint written yet")
                                    : concat("; last checkpoint: ", last)));
  }
  // Skip: the step's results stay in the "next" buffers and are
  // overwritten by the following step.
  ++skippedSteps_;
  std::printf("step %lld: %s, update skipped (%lld skipped so far)\n",
              (long long)step, what.c_str(), (long long)skippedSteps_);
  if (sinks_.metrics)
    sinks_.metrics->write(skippedStepJson(step, skippedSteps_));
}

void Trainer::report(int64_t step, double lr, const StepOutcome &outcome,
                     int64_t windowSteps, double windowSeconds) {
  StepMetrics m;
  m.step = step;
  m.loss = outcome.loss;
  m.lr = lr;
  m.gradNorm = outcome.gradNorm;
  m.ms = 1000.0 * windowSeconds / double(windowSteps);
  m.samplesPerS = windowSeconds > 0
                      ? double(globalBatch() * windowSteps) / windowSeconds
                      : 0.0;
  if (data_.tokensPerSample() > 0)
    m.tokensPerS = m.samplesPerS * double(data_.tokensPerSample());
  if (config_.peakFlops && windowSeconds > 0)
    m.mfu = double(desc_.flops) * double(config_.gradAccum) *
            double(windowSteps) / windowSeconds / *config_.peakFlops;
  if (lossScale_ >= 0)
    m.lossScale = currentLossScale();
  std::printf("%s\n", formatStepLine(m, config_.steps).c_str());
  std::fflush(stdout);
  if (sinks_.metrics)
    sinks_.metrics->write(stepJson(m));
  if (EventWriter *tb = sinks_.tensorboard) {
    tb->scalar("loss", step, m.loss);
    tb->scalar("lr", step, m.lr);
    if (m.gradNorm)
      tb->scalar("grad_norm", step, *m.gradNorm);
    tb->scalar("samples_per_s", step, m.samplesPerS);
    if (m.tokensPerS)
      tb->scalar("tokens_per_s", step, *m.tokensPerS);
    if (m.mfu)
      tb->scalar("mfu", step, *m.mfu);
    tb->flush();
  }
}

RunEnd Trainer::stopAfter(int64_t step) {
  int sig = StopSignals::received();
  saveCheckpoint(step);
  std::printf("received %s: stopped after step %lld%s%s\n",
              sig ? signalName(sig) : "a stop signal (on another process)",
              (long long)step,
              sinks_.checkpoints ? "; resume with --resume from " : "",
              sinks_.checkpoints ? sinks_.checkpoints->lastPath().c_str() : "");
  std::fflush(stdout);
  return RunEnd::Interrupted;
}

RunEnd Trainer::run() {
  using Clock = std::chrono::steady_clock;
  SampleOrder order(data_.numSamples(), config_.shuffle, config_.seed);
  const int64_t firstStep = stepsDone_ + 1;
  // The steps since the last reported line: its ms/step and samples/s.
  auto windowStart = Clock::now();
  int64_t windowSteps = 0;
  for (int64_t step = firstStep; step <= config_.steps; ++step) {
    const double lr = setHyperBuffers(step);
    const bool profiled = config_.profile &&
                          (step > firstStep || config_.steps == firstStep);
    const StepOutcome outcome = runStep(order, step, profiled);
    ++windowSteps;
    stepsDone_ = step;
    commitOrSkip(step, outcome);

    if (step == firstStep || step % config_.logEvery == 0 ||
        step == config_.steps) {
      report(step, lr, outcome, windowSteps,
             std::chrono::duration<double>(Clock::now() - windowStart).count());
      windowStart = Clock::now();
      windowSteps = 0;
    }
    if (sinks_.evaluator && config_.evalEvery > 0 &&
        step % config_.evalEvery == 0 && step != config_.steps) {
      evaluate(step);
      windowStart = Clock::now(); // keep eval time out of the step timing
    }
    if (config_.checkpointEvery > 0 && step % config_.checkpointEvery == 0) {
      saveCheckpoint(step);
      windowStart = Clock::now();
    }
    if (outcome.stopRequested)
      return stopAfter(step);
  }
  saveCheckpoint(config_.steps);
  if (sinks_.evaluator)
    evaluate(config_.steps);
  return RunEnd::Completed;
}

} // namespace lmc::rt
