//===- metrics.cpp - Progress lines and the JSONL metrics file -----------===//

#include "cli/metrics.h"

#include "base/error.h"
#include "io/file_io.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <string_view>

namespace lmc::rt {

namespace {

/// JSON has no NaN/Infinity; write null so every line stays parseable.
std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

int digits(int64_t n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

/// "4.2s", "42s", "12m05s", "3h07m".
std::string formatDuration(double seconds) {
  char buf[32];
  if (seconds < 10)
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  else if (seconds < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", seconds);
  else if (seconds < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(seconds) / 60,
                  int(seconds) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(seconds) / 3600,
                  int(seconds) / 60 % 60);
  return buf;
}

} // namespace

std::string formatStepLine(const StepMetrics &m, int64_t totalSteps) {
  char buf[256];
  const int width = digits(totalSteps);
  std::string line;
  std::snprintf(buf, sizeof buf, "step %*lld/%lld | loss %.6f | lr %.3e",
                width, (long long)m.step, (long long)totalSteps, m.loss, m.lr);
  line = buf;
  if (m.gradNorm) {
    std::snprintf(buf, sizeof buf, " | norm %.4f", *m.gradNorm);
    line += buf;
  }
  // Sequence models are compared by tokens/s (llm.c, nanoGPT): the
  // samples/s of a language model's batch of 1 would read "0".
  if (m.tokensPerS)
    std::snprintf(buf, sizeof buf, " | %.2f ms | %.0f tok/s", m.ms,
                  *m.tokensPerS);
  else
    std::snprintf(buf, sizeof buf, " | %.2f ms | %.0f samples/s", m.ms,
                  m.samplesPerS);
  line += buf;
  if (m.mfu) {
    std::snprintf(buf, sizeof buf, " | MFU %.2f%%", 100.0 * *m.mfu);
    line += buf;
  }
  if (m.lossScale) {
    std::snprintf(buf, sizeof buf, " | scale %g", *m.lossScale);
    line += buf;
  }
  if (m.step < totalSteps)
    line += " | ETA " +
            formatDuration(m.ms * double(totalSteps - m.step) / 1000.0);
  return line;
}

std::string formatEvalLine(const EvalMetrics &m) {
  char buf[256];
  int n = std::snprintf(buf, sizeof buf, "eval: loss %.6f", m.loss);
  if (m.correct && m.counted > 0)
    std::snprintf(buf + n, sizeof buf - size_t(n),
                  " | accuracy %.2f%% (%lld/%lld)",
                  100.0 * double(*m.correct) / double(m.counted),
                  (long long)*m.correct, (long long)m.counted);
  return buf;
}

std::string stepJson(const StepMetrics &m) {
  std::string json =
      concat("{\"step\":", m.step, ",\"loss\":", jsonNumber(m.loss),
             ",\"lr\":", jsonNumber(m.lr));
  if (m.gradNorm)
    json += concat(",\"grad_norm\":", jsonNumber(*m.gradNorm));
  json += concat(",\"ms\":", jsonNumber(m.ms),
                 ",\"samples_per_s\":", jsonNumber(m.samplesPerS));
  if (m.tokensPerS)
    json += concat(",\"tokens_per_s\":", jsonNumber(*m.tokensPerS));
  if (m.mfu)
    json += concat(",\"mfu\":", jsonNumber(*m.mfu));
  if (m.lossScale)
    json += concat(",\"loss_scale\":", jsonNumber(*m.lossScale));
  return json + "}";
}

std::string skippedStepJson(int64_t step, int64_t skippedSteps,
                            std::optional<double> lossScale) {
  std::string json = concat("{\"step\":", step, ",\"skipped\":true");
  if (lossScale)
    json += concat(",\"overflow\":true,\"loss_scale\":",
                   jsonNumber(*lossScale));
  return json + concat(",\"skipped_steps\":", skippedSteps, "}");
}

std::string evalJson(const EvalMetrics &m) {
  std::string json =
      concat("{\"step\":", m.step, ",\"eval_loss\":", jsonNumber(m.loss),
             ",\"eval_samples\":", m.samples);
  if (m.correct && m.counted > 0)
    json += concat(",\"eval_accuracy\":",
                   jsonNumber(double(*m.correct) / double(m.counted)));
  return json + "}";
}

namespace {

/// The value of a line's leading "step" (every line lmc writes has one).
std::optional<int64_t> loggedStep(std::string_view line) {
  constexpr std::string_view kKey = "{\"step\":";
  if (line.substr(0, kKey.size()) != kKey)
    return std::nullopt;
  int64_t step = 0;
  const char *digits = line.data() + kKey.size();
  if (std::from_chars(digits, line.data() + line.size(), step).ptr == digits)
    return std::nullopt;
  return step;
}

/// Rewrites `path` (when it exists) without the lines logged after `step`
/// and without a last line a killed run left unfinished.
void dropLinesAfter(const std::string &path, int64_t step) {
  if (!std::filesystem::exists(path))
    return; // a run resumed with a new --metrics file
  const std::vector<uint8_t> bytes = readFile(path);
  const std::string_view text(reinterpret_cast<const char *>(bytes.data()),
                              bytes.size());
  std::string kept;
  for (size_t begin = 0, end; (end = text.find('\n', begin)) !=
                              std::string_view::npos;
       begin = end + 1) {
    const std::string_view line = text.substr(begin, end + 1 - begin);
    const std::optional<int64_t> logged = loggedStep(line);
    if (!logged || *logged <= step)
      kept += line;
  }
  if (kept.size() != text.size())
    writeFileAtomically(path, {{kept.data(), kept.size()}});
}

} // namespace

MetricsFile::MetricsFile(const std::string &path,
                         std::optional<int64_t> resumedAt)
    : path_(path) {
  if (path.empty())
    return;
  if (resumedAt)
    dropLinesAfter(path, *resumedAt);
  file_ = std::fopen(path.c_str(), resumedAt ? "a" : "w");
  LMC_CHECK_SYS(file_, "cannot open metrics file '", path, "'");
}

MetricsFile::~MetricsFile() {
  if (file_)
    std::fclose(file_);
}

void MetricsFile::write(const std::string &jsonLine) {
  if (!file_)
    return;
  LMC_CHECK_SYS(std::fputs(jsonLine.c_str(), file_) >= 0 &&
                    std::fputc('\n', file_) != EOF,
                "cannot write metrics file '", path_, "'");
  // Flush per line so a crashed or killed run still leaves its metrics.
  LMC_CHECK_SYS(std::fflush(file_) == 0, "cannot write metrics file '", path_,
                "'");
}

void MetricsFile::close() {
  if (!file_)
    return;
  std::FILE *f = file_;
  file_ = nullptr;
  LMC_CHECK_SYS(std::fclose(f) == 0, "cannot close metrics file '", path_, "'");
}

} // namespace lmc::rt
