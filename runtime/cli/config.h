//===- config.h - Command-line flags of a training executable ------------===//
//
// All run-time options live in one Config struct, filled from argv by
// parseFlags. docs/training-executable.md documents every flag.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_CONFIG_H
#define LMC_RUNTIME_CONFIG_H

#include "model/schedule.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lmc::rt {

/// `--input NAME=FILE`.
struct NamedFile {
  std::string name;
  std::string path;
};

/// --on-nonfinite: what a step with a NaN/Inf loss or gradient norm does.
enum class NonFinitePolicy { Stop, Skip };

struct Config {
  std::vector<NamedFile> inputs;     // --input, repeatable
  std::vector<NamedFile> evalInputs; // --eval-input, repeatable
  int64_t steps = 100;               // --steps
  int64_t gradAccum = 1;             // --grad-accum
  std::optional<double> lr;          // --lr (else the compiled default)
  int64_t logEvery = 10;             // --log-every
  int64_t evalEvery = 0;             // --eval-every (0: only after training)
  int64_t evalSteps = 0;             // --eval-steps (0: the whole eval set)
  bool shuffle = false;              // --shuffle
  uint64_t seed = 0;                 // --seed
  std::string metricsPath;           // --metrics FILE.jsonl
  std::string savePath;              // --save FILE.safetensors
  std::string initPath;              // --init FILE.safetensors or DIR
  std::string saveHfDir;             // --save-hf DIR
  std::string saveAdapterDir;        // --save-adapter DIR
  bool mergeAdapter = false;         // --merge-adapter
  std::optional<std::string> adapterStripPrefix; // --adapter-strip-prefix P
  std::optional<uint64_t> hfShardBytes; // --hf-shard-size BYTES
  std::string exportOnnxPath;        // --export-onnx FILE.onnx
  bool exportExternalData = false;   // --export-external-data
  // Schedules and clipping (docs/training.md).
  // Unset: the compiled default (descriptor `schedule` line), else constant,
  // no warmup, floor 0.
  std::optional<ScheduleKind> schedule; // --schedule
  std::optional<int64_t> warmup;        // --warmup N
  std::optional<double> lrMin;          // --lr-min F
  std::optional<int64_t> decaySteps;              // --decay-steps N (wsd)
  std::optional<int64_t> scheduleSteps; // --schedule-steps N (default --steps)
  std::optional<double> clipGradNorm;             // --clip-grad-norm F
  NonFinitePolicy onNonFinite = NonFinitePolicy::Stop; // --on-nonfinite
  // Checkpoints.
  std::string checkpointDir;   // --checkpoint-dir DIR
  int64_t checkpointEvery = 0; // --checkpoint-every N (0: only at the end)
  int64_t keep = 0;            // --keep K (0: keep all)
  bool resume = false;         // --resume
  // Token data (llm.c / nanoGPT .bin shards; a glob pattern).
  std::string tokens;     // --tokens PATTERN
  std::string evalTokens; // --eval-tokens PATTERN
  // Monitoring.
  std::string logDir;               // --log-dir DIR (TensorBoard)
  std::optional<double> peakFlops;  // --peak-flops F (FLOP/s, for MFU)
  std::optional<int64_t> threads;   // --threads N (default: all cores)
  /// --collective-timeout SECONDS (0: wait forever).
  double collectiveTimeout = 600;
  /// --bucket-mb MB: data parallelism all-reduces the gradients in buckets
  /// of about this many megabytes, each as soon as it is complete.
  double bucketMb = 25;
  /// --zero 1: ZeRO stage 1, optimizer state sharded over the processes.
  int zeroStage = 0;
  /// --memory-budget BYTES (0: no check; default: physical memory).
  std::optional<uint64_t> memoryBudget;
  bool info = false;                 // --info
  bool profile = false;              // --profile
  bool help = false;                 // --help
  bool version = false;              // --version
  /// The flags given ("--seed", ...), for the checks that refuse a flag
  /// which cannot take effect.
  std::set<std::string> given;
};

/// Parses the arguments after argv[0]. Throws UsageError on any problem.
Config parseFlags(const std::vector<std::string> &args);

/// What decides whether a flag can take effect, known once the model is
/// read and the processes are connected.
struct RunFacts {
  ScheduleKind schedule = ScheduleKind::Constant; // the one in effect
  int processes = 1;                              // of the whole job
  bool randomKey = false; // the model draws random numbers (dropout)
  /// The compiled step times its loop nests and runtime calls
  /// (lmc-profile-regions; not in --target cuda builds).
  bool profileRegions = false;
};

/// Throws UsageError naming the first flag that was given but cannot take
/// effect in this run, why, and what to do (no flag is silently ignored).
void checkFlagsTakeEffect(const Config &config, const RunFacts &facts);

/// The --help text.
std::string usageText(const std::string &program);

} // namespace lmc::rt

#endif // LMC_RUNTIME_CONFIG_H
