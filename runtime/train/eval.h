//===- eval.h - Evaluation over a whole data set -------------------------===//
#ifndef LMC_RUNTIME_EVAL_H
#define LMC_RUNTIME_EVAL_H

#include "cli/metrics.h"
#include "memory/buffer.h"
#include "model/compiled_model.h"
#include "model/descriptor.h"
#include "model/model_state.h"
#include "train/dataset.h"

#include <memory>
#include <optional>
#include <vector>

namespace lmc::rt {

/// Of the rows i < count whose label is not `ignored` (a cross-entropy's
/// ignore_index, -100: such a row is no sample of the accuracy), how many
/// there are and in how many argmax(logits[i, :]) == labels[i] (first
/// maximum wins, like torch.argmax). logits: f32/f64 [*, numClasses];
/// labels: i64/i32. Out-of-range labels never count as correct.
struct AccuracyCount {
  int64_t correct = 0, counted = 0;
};
AccuracyCount countCorrect(const void *logits, DType logitsType,
                           int64_t numClasses, const void *labels,
                           DType labelsType, int64_t count,
                           std::optional<int64_t> ignored = {});

/// Runs lmc_eval_step over every sample of an eval set in batches of the
/// compiled eval batch size. The last partial batch is filled by wrapping
/// to the start; only its real samples count: its loss is weighted by the
/// number of real samples, and accuracy only looks at the real rows.
/// With `maxBatches` > 0 only the first maxBatches batches are evaluated
/// (--eval-steps; nanoGPT's eval_iters, llm.c's val_max_steps).
class Evaluator {
public:
  Evaluator(const Descriptor &desc, std::unique_ptr<BatchSource> data,
            StepFn evalStep, int64_t maxBatches = 0);
  Evaluator(const Descriptor &desc, Dataset dataset, StepFn evalStep,
            int64_t maxBatches = 0)
      : Evaluator(desc, std::make_unique<Dataset>(std::move(dataset)),
                  evalStep, maxBatches) {}

  EvalMetrics run(ModelState &state);
  bool reportsAccuracy() const { return logitsResult_ >= 0; }

private:
  const Descriptor &desc_;
  std::unique_ptr<BatchSource> dataset_;
  StepFn evalStep_;
  int64_t batchSize_ = 0;
  int64_t maxBatches_ = 0; // 0: the whole set
  std::vector<AlignedBuffer> inputBuffers_;  // one per eval input
  std::vector<AlignedBuffer> resultBuffers_; // one per eval result
  int lossResult_ = -1;
  int logitsResult_ = -1; // eval result holding [B, C] logits, or -1
  int labelsInput_ = -1;  // eval input holding [B] labels, or -1
  DType labelsType_ = DType::I64;
  std::optional<int64_t> ignoredLabel_; // the labels' ignore_index
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_EVAL_H
