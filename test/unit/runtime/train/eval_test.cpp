#include "train/eval.h"

#include "test_util.h"

#include <cmath>

using namespace lmc::rt;
using namespace lmc::rt::test;

namespace {

TEST(Eval, CountCorrect) {
  // Rows: argmax 1, 0 (tie: first wins), 2.
  std::vector<float> logits = {0, 5, 1, 3, 3, 0, -1, -2, 0};
  std::vector<int64_t> labels = {1, 1, 2};
  AccuracyCount all =
      countCorrect(logits.data(), DType::F32, 3, labels.data(), DType::I64, 3);
  EXPECT_EQ(all.correct, 2);
  EXPECT_EQ(all.counted, 3);
  std::vector<double> logits64(logits.begin(), logits.end());
  std::vector<int32_t> labels32 = {1, 0, 7};
  EXPECT_EQ(countCorrect(logits64.data(), DType::F64, 3, labels32.data(),
                         DType::I32, 3)
                .correct,
            2);
  // Only the first `count` rows are looked at.
  EXPECT_EQ(
      countCorrect(logits.data(), DType::F32, 3, labels.data(), DType::I64, 1)
          .correct,
      1);
  // A row whose label is the ignore_index is no sample: 1 of 2 counted
  // rows is right (PyTorch's accuracy over labels != -100).
  std::vector<int64_t> masked = {1, -100, 0};
  AccuracyCount some = countCorrect(logits.data(), DType::F32, 3,
                                    masked.data(), DType::I64, 3, -100);
  EXPECT_EQ(some.correct, 1);
  EXPECT_EQ(some.counted, 2);
  // Without an ignore_index -100 is a wrong label like any other.
  EXPECT_EQ(countCorrect(logits.data(), DType::F32, 3, masked.data(),
                         DType::I64, 3)
                .counted,
            3);
}

const char *kClassifier = "lmc-model 1\nloss cross_entropy\noptimizer sgd\n"
                          "hparam lr 0.1\nflops 0\n"
                          "train arg param w f32 0\n"
                          "train arg input x f32 2 4 2\n"
                          "train arg input labels i64 1 4\n"
                          "train arg hyper lr f32 0\n"
                          "train result param w f32 0\n"
                          "train result loss loss f32 0\n"
                          "eval arg param w f32 0\n"
                          "eval arg input x f32 2 4 2\n"
                          "eval arg input labels i64 1 4\n"
                          "eval result loss loss f32 0\n"
                          "eval result output logits f32 2 4 2\n"
                          "init w 0 4\nend\n";

/// Eval step: logits = x, loss = mean over the batch of x[:, 0] * w.
void fakeEvalStep(void **buffers) {
  const float *w = static_cast<float *>(buffers[0]);
  const float *x = static_cast<float *>(buffers[1]);
  float *loss = static_cast<float *>(buffers[3]);
  float *logits = static_cast<float *>(buffers[4]);
  float sum = 0;
  for (int i = 0; i < 4; ++i) {
    sum += x[2 * i] * *w;
    logits[2 * i] = x[2 * i];
    logits[2 * i + 1] = x[2 * i + 1];
  }
  *loss = sum / 4;
}

TEST(Eval, PartialLastBatchCountsOnlyRealSamples) {
  const float one = 1.0f;
  Descriptor desc = parseDescriptor(kClassifier, 4);
  ModelState state(desc, reinterpret_cast<const unsigned char *>(&one));
  // 6 samples: batches {0,1,2,3} and {4,5 | 0,1 padding}.
  std::vector<float> x = {1, 0, 2, 0, 3, 0, 4, 0, 0, 5, 0, 6};
  std::vector<int64_t> labels = {0, 0, 1, 0, 1, 0};
  std::vector<const TensorSpec *> specs = {&desc.evalArgs[1],
                                           &desc.evalArgs[2]};
  std::vector<NpyArray> arrays(2);
  arrays[0].dtype = DType::F32;
  arrays[0].shape = {6, 2};
  arrays[0].bytes = toBytes(x);
  arrays[1].dtype = DType::I64;
  arrays[1].shape = {6};
  arrays[1].bytes = toBytes(labels);
  Evaluator evaluator(desc, Dataset::fromArrays(arrays, specs, {"x", "l"}),
                      fakeEvalStep);
  EXPECT_TRUE(evaluator.reportsAccuracy());
  EvalMetrics m = evaluator.run(state);
  EXPECT_EQ(m.samples, 6);
  // Batch losses: (1+2+3+4)/4 = 2.5 (4 real), (0+0+1+2)/4 = 0.75 (2 real).
  EXPECT_DOUBLE_EQ(m.loss, (2.5 * 4 + 0.75 * 2) / 6);
  // Predictions: 0,0,0,0 | 1,1 -> correct: 0,1,3 and 4 -> 4 of 6.
  ASSERT_TRUE(m.correct);
  EXPECT_EQ(*m.correct, 4);
  EXPECT_EQ(m.counted, 6);

  // With the labels' ignore_index (the `bound` line of a cross-entropy),
  // a row labelled -100 is no sample of the accuracy: without samples 1
  // and 4 (both right before), 2 of the 4 others are right (0 and 3).
  std::string withBound = kClassifier;
  withBound.insert(withBound.find("init w"), "bound labels 2 classes -100\n");
  Descriptor bounded = parseDescriptor(withBound, 4);
  labels[1] = labels[4] = -100;
  arrays[1].bytes = toBytes(labels);
  Evaluator masked(bounded, Dataset::fromArrays(arrays, specs, {"x", "l"}),
                   fakeEvalStep);
  EvalMetrics mm = masked.run(state);
  EXPECT_EQ(mm.samples, 6);
  EXPECT_EQ(*mm.correct, 2);
  EXPECT_EQ(mm.counted, 4);
}

TEST(Eval, MetricsFormatting) {
  EvalMetrics m;
  m.step = 7;
  m.loss = 0.1234;
  m.samples = 360;
  EXPECT_EQ(formatEvalLine(m), "eval: loss 0.123400");
  m.correct = 345;
  m.counted = 360;
  EXPECT_EQ(formatEvalLine(m),
            "eval: loss 0.123400 | accuracy 95.83% (345/360)");
  EXPECT_EQ(evalJson(m), "{\"step\":7,\"eval_loss\":0.1234,"
                         "\"eval_samples\":360,\"eval_accuracy\":0.958333333}");
  StepMetrics s{10, 0.523412, 1e-3, 1.234, 52034};
  EXPECT_EQ(formatStepLine(s, 100),
            "step  10/100 | loss 0.523412 | lr 1.000e-03 | 1.23 ms | 52034 "
            "samples/s | ETA 0.1s");
  s.loss = std::nan("");
  EXPECT_EQ(stepJson(s), "{\"step\":10,\"loss\":null,\"lr\":0.001,"
                         "\"ms\":1.234,\"samples_per_s\":52034}");
}

} // namespace
