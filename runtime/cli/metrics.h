//===- metrics.h - Progress lines and the JSONL metrics file -------------===//
#ifndef LMC_RUNTIME_METRICS_H
#define LMC_RUNTIME_METRICS_H

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace lmc::rt {

/// One logged training step.
struct StepMetrics {
  int64_t step = 0; // 1-based
  double loss = 0;
  double lr = 0;
  double ms = 0;          // mean wall time per step since the previous log
  double samplesPerS = 0; // batch size * steps / wall time, same window
  std::optional<double> gradNorm;  // when the model returns grad_norm
  std::optional<double> tokensPerS; // token data only
  std::optional<double> mfu;        // with --peak-flops: achieved / peak
  std::optional<double> lossScale;  // dynamic loss scaling: the next step's
};

/// One evaluation pass.
struct EvalMetrics {
  int64_t step = 0; // training steps done before this evaluation
  double loss = 0;
  int64_t samples = 0;
  std::optional<int64_t> correct; // set when accuracy is meaningful
  int64_t counted = 0; // the samples accuracy is over (labels not ignored)
};

/// "step   10/100 | loss 0.523412 | lr 1.000e-03 | norm 1.2345 | 1.23 ms |
///  52034 samples/s | MFU 12.34% | ETA 0.1s" (norm and MFU only when known;
/// tok/s in place of samples/s for sequence data; ETA before the last step).
std::string formatStepLine(const StepMetrics &m, int64_t totalSteps);
/// "eval: loss 0.123400 | accuracy 95.83% (345/360)"
std::string formatEvalLine(const EvalMetrics &m);
/// One JSON object (no newline).
std::string stepJson(const StepMetrics &m);
std::string evalJson(const EvalMetrics &m);
/// A step whose update was skipped: its non-finite loss or gradient
/// (--on-nonfinite skip), or a gradient overflow under dynamic loss scaling
/// (`lossScale`: the scale after it).
std::string skippedStepJson(int64_t step, int64_t skippedSteps,
                            std::optional<double> lossScale = {});

/// Appends JSON lines to --metrics FILE (nothing when the path is empty).
class MetricsFile {
public:
  /// `resumedAt`: the run goes on from a checkpoint of that many steps:
  /// the file keeps the earlier run's lines up to it and drops those after
  /// (a run killed after its last checkpoint logged steps that the resumed
  /// run logs again), then the new lines are appended.
  explicit MetricsFile(const std::string &path,
                       std::optional<int64_t> resumedAt = std::nullopt);
  ~MetricsFile();
  MetricsFile(const MetricsFile &) = delete;
  MetricsFile &operator=(const MetricsFile &) = delete;

  void write(const std::string &jsonLine);
  /// Flushes and closes, reporting any write error.
  void close();

private:
  std::string path_;
  std::FILE *file_ = nullptr;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_METRICS_H
