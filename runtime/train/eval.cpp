//===- eval.cpp - Evaluation over a whole data set -----------------------===//

#include "train/eval.h"

#include "base/error.h"

#include <algorithm>
#include <cstring>

namespace lmc::rt {

namespace {

template <typename T> int64_t argmaxRow(const T *row, int64_t numClasses) {
  int64_t best = 0;
  for (int64_t c = 1; c < numClasses; ++c)
    if (row[c] > row[best])
      best = c;
  return best;
}

int64_t labelAt(const void *labels, DType type, int64_t i) {
  if (type == DType::I32)
    return static_cast<const int32_t *>(labels)[i];
  return static_cast<const int64_t *>(labels)[i];
}

std::vector<const TensorSpec *> evalInputs(const Descriptor &desc) {
  std::vector<const TensorSpec *> inputs;
  for (const TensorSpec &arg : desc.evalArgs)
    if (arg.role == Role::Input)
      inputs.push_back(&arg);
  return inputs;
}

} // namespace

AccuracyCount countCorrect(const void *logits, DType logitsType,
                           int64_t numClasses, const void *labels,
                           DType labelsType, int64_t count,
                           std::optional<int64_t> ignored) {
  AccuracyCount total;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t label = labelAt(labels, labelsType, i);
    if (ignored && label == *ignored)
      continue;
    ++total.counted;
    int64_t predicted =
        logitsType == DType::F64
            ? argmaxRow(static_cast<const double *>(logits) + i * numClasses,
                        numClasses)
            : argmaxRow(static_cast<const float *>(logits) + i * numClasses,
                        numClasses);
    total.correct += predicted == label;
  }
  return total;
}

Evaluator::Evaluator(const Descriptor &desc, std::unique_ptr<BatchSource> data,
                     StepFn evalStep, int64_t maxBatches)
    : desc_(desc), dataset_(std::move(data)), evalStep_(evalStep),
      maxBatches_(maxBatches) {
  LMC_CHECK(!desc.evalArgs.empty(), "the model has no eval step");
  std::vector<const TensorSpec *> inputs = evalInputs(desc);
  LMC_CHECK(!inputs.empty(), "the model's eval step takes no inputs");
  batchSize_ = inputs[0]->shape[0];
  for (const TensorSpec *input : inputs) {
    LMC_CHECK(input->shape[0] == batchSize_, "eval input '", input->name,
              "' has batch size ", input->shape[0], ", expected ", batchSize_);
    inputBuffers_.emplace_back(input->byteSize());
    if (input->name == "labels" && input->shape.size() == 1 &&
        (input->dtype == DType::I64 || input->dtype == DType::I32)) {
      labelsInput_ = int(inputBuffers_.size() - 1);
      labelsType_ = input->dtype;
      if (input->bound)
        ignoredLabel_ = input->bound->ignored;
    }
  }

  int outputs = 0, logits = -1;
  for (size_t i = 0; i < desc.evalResults.size(); ++i) {
    const TensorSpec &res = desc.evalResults[i];
    resultBuffers_.emplace_back(res.byteSize());
    if (res.role == Role::Loss)
      lossResult_ = int(i);
    if (res.role == Role::Output) {
      ++outputs;
      if (res.shape.size() == 2 && res.shape[0] == batchSize_ &&
          (res.dtype == DType::F32 || res.dtype == DType::F64))
        logits = int(i);
    }
  }
  // Accuracy only when the output is unambiguously the class logits.
  if (desc.loss == "cross_entropy" && outputs == 1 && labelsInput_ >= 0)
    logitsResult_ = logits;
}

EvalMetrics Evaluator::run(ModelState &state) {
  std::vector<void *> buffers;
  size_t nextInput = 0;
  for (const TensorSpec &arg : desc_.evalArgs) {
    if (void *b = state.buffer(arg, /*next=*/false))
      buffers.push_back(b);
    else
      buffers.push_back(inputBuffers_[nextInput++].data());
  }
  for (AlignedBuffer &result : resultBuffers_)
    buffers.push_back(result.data());

  int64_t n = dataset_->numSamples();
  if (maxBatches_ > 0 && maxBatches_ < (n + batchSize_ - 1) / batchSize_)
    n = maxBatches_ * batchSize_;
  double weightedLoss = 0;
  AccuracyCount accuracy;
  std::vector<int64_t> samples(static_cast<size_t>(batchSize_));
  for (int64_t start = 0; start < n; start += batchSize_) {
    const int64_t real = std::min(batchSize_, n - start);
    for (int64_t i = 0; i < batchSize_; ++i)
      samples[size_t(i)] = (start + i) % n;
    dataset_->fillBatch(samples, inputBuffers_);
    evalStep_(buffers.data());
    weightedLoss +=
        double(*resultBuffers_[size_t(lossResult_)].as<float>()) * double(real);
    if (logitsResult_ >= 0) {
      const TensorSpec &logits = desc_.evalResults[size_t(logitsResult_)];
      AccuracyCount batch = countCorrect(
          resultBuffers_[size_t(logitsResult_)].data(), logits.dtype,
          logits.shape[1], inputBuffers_[size_t(labelsInput_)].data(),
          labelsType_, real, ignoredLabel_);
      accuracy.correct += batch.correct;
      accuracy.counted += batch.counted;
    }
  }
  EvalMetrics metrics;
  metrics.loss = weightedLoss / double(n);
  metrics.samples = n;
  if (logitsResult_ >= 0) {
    metrics.correct = accuracy.correct;
    metrics.counted = accuracy.counted;
  }
  return metrics;
}

} // namespace lmc::rt
