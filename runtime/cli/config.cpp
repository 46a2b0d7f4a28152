//===- config.cpp - Command-line flags of a training executable ----------===//

#include "cli/config.h"

#include "base/error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

namespace lmc::rt {

namespace {

/// `lmc`'s options that fix what the executable computes (docs/compiler.md):
/// given to the executable, they are refused with where they belong.
bool isCompileTimeFlag(const std::string &flag) {
  static const std::set<std::string> compileTime = {
      "--batch", "--max-param-bytes", "--loss", "--loss-from", "--optimizer",
      "--momentum", "--beta1", "--beta2", "--eps", "--weight-decay",
      "--freeze", "--train", "--remat", "--activation-budget", "--precision",
      "--keep-f32", "--loss-scaling", "--loss-scale-growth-interval",
      "--mesh", "--shard", "--target", "--cpu", "--cpu-features",
      "--gpu-arch", "--cuda-path", "--gpu-format", "--matmul-parts",
      "--fuse-attention", "--fuse-layer-norm"};
  return compileTime.count(flag.substr(0, flag.find('='))) != 0;
}

int64_t parseCount(const std::string &flag, const std::string &text,
                   int64_t minimum) {
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < minimum ||
      text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(
        concat(flag, " expects an integer >= ", minimum, ", got '", text, "'"));
  return value;
}

uint64_t parseSeed(const std::string &text) {
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(
        concat("--seed expects a non-negative integer, got '", text, "'"));
  return value;
}

/// "123", "512M", "24G": bytes with an optional binary K/M/G/T suffix.
uint64_t parseByteSize(const std::string &flag, const std::string &text) {
  std::string digits = text;
  int shift = 0;
  if (!text.empty()) {
    const std::string suffixes = "KMGT";
    size_t unit = suffixes.find(text.back());
    if (unit != std::string::npos) {
      shift = 10 * int(unit + 1);
      digits.pop_back();
    }
  }
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || errno == ERANGE ||
      digits.find_first_not_of("0123456789") != std::string::npos ||
      value > (~0ull >> shift))
    throw UsageError(concat(flag, " expects a byte count such as 1000000, "
                                  "512M or 24G, got '",
                            text, "'"));
  return uint64_t(value) << shift;
}

// A learning rate of 0 is allowed: it runs the step (loss, metrics) and
// leaves the parameters as they are.
double parseNonNegativeReal(const std::string &flag, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value) || value < 0)
    throw UsageError(
        concat(flag, " expects a non-negative number, got '", text, "'"));
  return value;
}

double parsePositiveReal(const std::string &flag, const std::string &text) {
  double value = parseNonNegativeReal(flag, text);
  if (value <= 0)
    throw UsageError(
        concat(flag, " expects a positive number, got '", text, "'"));
  return value;
}

NamedFile parseNamedFile(const std::string &flag, const std::string &text,
                         std::set<std::string> &seen) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(concat(flag, " expects NAME=FILE, got '", text, "'"));
  NamedFile nf{text.substr(0, eq), text.substr(eq + 1)};
  if (!seen.insert(nf.name).second)
    throw UsageError(concat(flag, " given twice for '", nf.name, "'"));
  return nf;
}

} // namespace

Config parseFlags(const std::vector<std::string> &args) {
  Config config;
  std::set<std::string> inputNames, evalInputNames;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inlineValue;
    if (size_t eq = flag.find('=');
        flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inlineValue = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    // Returns the flag's value: "--flag=value" or the next argument.
    auto value = [&]() -> std::string {
      if (inlineValue)
        return *inlineValue;
      if (i + 1 >= args.size())
        throw UsageError(concat(flag, " needs a value"));
      return args[++i];
    };
    auto noValue = [&]() {
      if (inlineValue)
        throw UsageError(concat(flag, " takes no value"));
    };

    config.given.insert(flag);
    if (flag == "--input")
      config.inputs.push_back(parseNamedFile(flag, value(), inputNames));
    else if (flag == "--eval-input")
      config.evalInputs.push_back(
          parseNamedFile(flag, value(), evalInputNames));
    else if (flag == "--steps")
      config.steps = parseCount(flag, value(), 0);
    else if (flag == "--lr")
      config.lr = parseNonNegativeReal(flag, value());
    else if (flag == "--threads")
      config.threads = parseCount(flag, value(), 1);
    else if (flag == "--collective-timeout")
      config.collectiveTimeout = parseNonNegativeReal(flag, value());
    else if (flag == "--bucket-mb")
      config.bucketMb = parseNonNegativeReal(flag, value());
    else if (flag == "--zero") {
      std::string stage = value();
      if (stage != "0" && stage != "1")
        throw UsageError(concat(
            "--zero expects a ZeRO stage, 0 or 1, got '", stage, "'"));
      config.zeroStage = stage == "1" ? 1 : 0;
    } else if (flag == "--grad-accum")
      config.gradAccum = parseCount(flag, value(), 1);
    else if (flag == "--log-every")
      config.logEvery = parseCount(flag, value(), 1);
    else if (flag == "--eval-every")
      config.evalEvery = parseCount(flag, value(), 1);
    else if (flag == "--eval-steps")
      config.evalSteps = parseCount(flag, value(), 1);
    else if (flag == "--seed") {
      config.seed = parseSeed(value());
    } else if (flag == "--metrics")
      config.metricsPath = value();
    else if (flag == "--save")
      config.savePath = value();
    else if (flag == "--init")
      config.initPath = value();
    else if (flag == "--save-hf")
      config.saveHfDir = value();
    else if (flag == "--save-adapter")
      config.saveAdapterDir = value();
    else if (flag == "--merge-adapter") {
      noValue();
      config.mergeAdapter = true;
    }
    else if (flag == "--adapter-strip-prefix")
      config.adapterStripPrefix = value();
    else if (flag == "--hf-shard-size") {
      config.hfShardBytes = parseByteSize(flag, value());
      if (*config.hfShardBytes == 0)
        throw UsageError("--hf-shard-size expects a positive byte count");
    }
    else if (flag == "--export-onnx")
      config.exportOnnxPath = value();
    else if (flag == "--export-external-data") {
      noValue();
      config.exportExternalData = true;
    } else if (flag == "--schedule") {
      std::string name = value();
      std::optional<ScheduleKind> kind = parseScheduleKind(name);
      if (!kind)
        throw UsageError(concat("--schedule expects constant, linear, cosine "
                                "or wsd, got '",
                                name, "'"));
      config.schedule = *kind;
    } else if (flag == "--warmup")
      config.warmup = parseCount(flag, value(), 0);
    else if (flag == "--lr-min")
      config.lrMin = parseNonNegativeReal(flag, value());
    else if (flag == "--decay-steps")
      config.decaySteps = parseCount(flag, value(), 0);
    else if (flag == "--schedule-steps")
      config.scheduleSteps = parseCount(flag, value(), 1);
    else if (flag == "--clip-grad-norm")
      config.clipGradNorm = parseNonNegativeReal(flag, value());
    else if (flag == "--on-nonfinite") {
      std::string policy = value();
      if (policy == "stop")
        config.onNonFinite = NonFinitePolicy::Stop;
      else if (policy == "skip")
        config.onNonFinite = NonFinitePolicy::Skip;
      else
        throw UsageError(
            concat("--on-nonfinite expects stop or skip, got '", policy, "'"));
    } else if (flag == "--checkpoint-dir")
      config.checkpointDir = value();
    else if (flag == "--checkpoint-every")
      config.checkpointEvery = parseCount(flag, value(), 1);
    else if (flag == "--keep")
      config.keep = parseCount(flag, value(), 0);
    else if (flag == "--resume") {
      noValue();
      config.resume = true;
    } else if (flag == "--tokens")
      config.tokens = value();
    else if (flag == "--eval-tokens")
      config.evalTokens = value();
    else if (flag == "--log-dir")
      config.logDir = value();
    else if (flag == "--memory-budget")
      config.memoryBudget = parseByteSize(flag, value());
    else if (flag == "--peak-flops")
      config.peakFlops = parsePositiveReal(flag, value());
    else if (flag == "--shuffle") {
      noValue();
      config.shuffle = true;
    } else if (flag == "--info") {
      noValue();
      config.info = true;
    } else if (flag == "--profile") {
      noValue();
      config.profile = true;
    } else if (flag == "--help" || flag == "-h") {
      noValue();
      config.help = true;
    } else if (flag == "--version") {
      noValue();
      config.version = true;
    } else if (isCompileTimeFlag(flag)) {
      const std::string name = flag.substr(0, flag.find('='));
      throw UsageError(concat(
          "unknown flag '", name, "': ", name,
          " is set when the model is compiled (lmc MODEL ", name,
          " ...), not when it trains; --info shows what this executable "
          "was compiled with"));
    } else if (flag.rfind("-", 0) == 0)
      throw UsageError(concat("unknown flag '", flag, "'"));
    else
      throw UsageError(concat("unexpected argument '", flag, "'"));
  }
  if (!config.tokens.empty() && !config.inputs.empty())
    throw UsageError("--tokens and --input cannot be combined");
  if (!config.evalTokens.empty() && !config.evalInputs.empty())
    throw UsageError("--eval-tokens and --eval-input cannot be combined");
  if ((config.resume || config.checkpointEvery > 0 || config.keep > 0) &&
      config.checkpointDir.empty())
    throw UsageError("--resume, --checkpoint-every and --keep need "
                     "--checkpoint-dir");
  if (config.exportExternalData && config.exportOnnxPath.empty())
    throw UsageError("--export-external-data applies to --export-onnx: "
                     "pass --export-onnx FILE.onnx too");
  if (config.resume && !config.initPath.empty())
    throw UsageError("--resume and --init cannot be combined");
  if (config.mergeAdapter && config.savePath.empty() &&
      config.saveHfDir.empty() && config.exportOnnxPath.empty())
    throw UsageError("--merge-adapter merges the adapters into the files "
                     "--save, --save-hf and --export-onnx write: pass one "
                     "of them");
  if (config.adapterStripPrefix && config.saveAdapterDir.empty())
    throw UsageError("--adapter-strip-prefix renames the modules of "
                     "--save-adapter: pass --save-adapter DIR too, or drop "
                     "it");
  if (config.hfShardBytes && config.saveHfDir.empty())
    throw UsageError("--hf-shard-size sizes the files of --save-hf: pass "
                     "--save-hf DIR too, or drop --hf-shard-size");
  if (!config.saveHfDir.empty() && config.initPath.empty())
    throw UsageError("--save-hf writes a Hugging Face checkpoint under the "
                     "names and with the config.json of the one training "
                     "starts from: pass --init DIR (a save_pretrained "
                     "directory)");
  return config;
}

void checkFlagsTakeEffect(const Config &config, const RunFacts &facts) {
  auto given = [&](const char *flag) { return config.given.count(flag) > 0; };
  if (facts.schedule == ScheduleKind::Constant) {
    for (const char *flag : {"--lr-min", "--schedule-steps"})
      if (given(flag))
        throw UsageError(concat(
            flag, " shapes a decaying schedule, and this run's is constant: "
                  "pass --schedule linear, cosine or wsd, or drop ",
            flag));
  }
  if (given("--decay-steps") && facts.schedule != ScheduleKind::Wsd)
    throw UsageError("--decay-steps is the length of the wsd schedule's "
                     "decay phase: pass --schedule wsd or drop it");
  if (given("--seed") && !config.shuffle && !facts.randomKey)
    throw UsageError("--seed seeds the shuffle and the model's random "
                     "numbers (dropout); this run has neither: pass "
                     "--shuffle or drop --seed");
  if (config.profile && !facts.profileRegions)
    throw UsageError(
        "--profile times the step's loop nests and runtime calls, and this "
        "executable has none to time (built for --target cuda, whose "
        "kernels run asynchronously: profile those with nsys); drop "
        "--profile");
  if (facts.processes == 1)
    for (const char *flag : {"--zero", "--bucket-mb", "--collective-timeout"})
      if (given(flag))
        throw UsageError(concat(
            flag, " applies when several processes train together "
                  "(mpirun -np N, srun, torchrun); this run is one process: "
                  "start it under one of those or drop ",
            flag));
}

std::string usageText(const std::string &program) {
  return concat(
      "usage: ", program, " --input NAME=FILE.npy ... [options]\n",
      "\n"
      "Trains the model compiled into this executable.\n"
      "\n"
      "data:\n"
      "  --input NAME=FILE.npy       training data for model input NAME\n"
      "                              (repeatable; first dim = samples)\n"
      "  --eval-input NAME=FILE.npy  evaluation data (repeatable)\n"
      "  --shuffle                   shuffle the samples every epoch\n"
      "  --seed S                    seed of --shuffle and of dropout\n"
      "                              (default 0)\n"
      "  --tokens PATTERN            llm.c/nanoGPT token shards (.bin, glob)\n"
      "                              instead of --input\n"
      "  --eval-tokens PATTERN       evaluation token shards\n"
      "training:\n"
      "  --steps N                   optimizer steps (default 100)\n"
      "  --grad-accum N              micro-batches per optimizer step\n"
      "                              (default 1; the step's batch is N x the\n"
      "                              compiled batch, x processes under mpirun)\n"
      "  --lr F                      learning rate (default: compiled in)\n"
      "  --eval-every N              also evaluate every N steps\n"
      "  --eval-steps K              evaluate only the first K batches of\n"
      "                              the eval data (default: all of it)\n"
      "  --schedule KIND             constant|linear|cosine|wsd (default\n"
      "                              constant)\n"
      "  --warmup N                  linear warmup steps (default 0)\n"
      "  --lr-min F                  floor of the decay (default 0)\n"
      "  --decay-steps N             wsd: length of the decay phase\n"
      "                              (default 20% of the steps after warmup)\n"
      "  --schedule-steps N          steps the schedule spans (default\n"
      "                              --steps; set it to stop early and\n"
      "                              resume on the same schedule)\n"
      "  --clip-grad-norm F          clip the global gradient norm (0: off;\n"
      "                              default: compiled in)\n"
      "  --on-nonfinite stop|skip    on a NaN/Inf loss or gradient norm: stop\n"
      "                              (default) or skip the update\n"
      "checkpoints:\n"
      "  --checkpoint-dir DIR        write checkpoints here (and at the end)\n"
      "  --checkpoint-every N        also every N steps\n"
      "  --keep K                    keep the newest K checkpoints (0: all)\n"
      "  --resume                    continue from the newest checkpoint\n"
      "processes (mpirun, srun):\n"
      "  --collective-timeout S      end the job when a collective waits\n"
      "                              longer than S seconds for another\n"
      "                              process (default 600; 0: forever)\n"
      "  --bucket-mb MB              all-reduce the gradients in buckets of\n"
      "                              about MB megabytes, each while the\n"
      "                              backward pass goes on (default 25)\n"
      "  --zero 1                    ZeRO-1: each process keeps and updates\n"
      "                              the optimizer state of 1/N of the\n"
      "                              parameters (default 0: all of it)\n"
      "parameters:\n"
      "  --init FILE.safetensors     start from these parameters (also a\n"
      "                              Hugging Face checkpoint: names match\n"
      "                              by suffix, bf16/f16 widened; DIR: a\n"
      "                              save_pretrained directory, sharded\n"
      "                              ones too)\n"
      "  --save FILE.safetensors     write the final parameters\n"
      "  --save-hf DIR               write the final parameters as a\n"
      "                              Hugging Face checkpoint: the --init\n"
      "                              checkpoint's names and config.json\n"
      "                              (dtype float32), from_pretrained(DIR)\n"
      "  --hf-shard-size BYTES       --save-hf's largest file (default\n"
      "                              5000000000, save_pretrained's 5GB)\n"
      "  --save-adapter DIR          (lmc --lora) write the trained\n"
      "                              adapters as PEFT does:\n"
      "                              PeftModel.from_pretrained(base, DIR)\n"
      "  --merge-adapter             (lmc --lora) --save, --save-hf and\n"
      "                              --export-onnx write the model with\n"
      "                              the adapters merged into their\n"
      "                              weights (PEFT's merge_and_unload)\n"
      "  --adapter-strip-prefix P    drop P from the export's module\n"
      "                              names in --save-adapter (an export\n"
      "                              of a wrapper: m.)\n"      "  --export-onnx FILE.onnx     write the input ONNX model with the\n"
      "                              final parameters as its initializers\n"
      "                              (as external data FILE.onnx.data\n"
      "                              above protobuf's 2 GB)\n"
      "  --export-external-data      external data also below 2 GB\n"
      "output:\n"
      "  --threads N                 threads for the matmuls and the big "
      "loops (default: all cores)\n"
      "  --log-every N               progress line every N steps "
      "(default 10)\n"
      "  --metrics FILE.jsonl        also write metrics as JSON lines\n"
      "  --log-dir DIR               also write TensorBoard event files\n"
      "  --peak-flops F              peak FLOP/s MFU is reported against\n"
      "                              (default: the hardware's: cores x\n"
      "                              FLOP/cycle x clock, printed at start)\n"
      "  --memory-budget BYTES       refuse to start when the estimated\n"
      "                              memory need is above (e.g. 16G; 0: no\n"
      "                              check; default: physical memory)\n"
      "  --profile                   after training, print the time of\n"
      "                              each loop nest and BLAS call per step\n"
      "                              (steps after the first), named by the\n"
      "                              model's nodes\n"
      "  --info                      describe the model and exit\n"
      "  --version                   the lmc that compiled this executable,\n"
      "                              its command line and the model's\n"
      "                              fingerprint\n"
      "  --help                      show this help\n");
}

} // namespace lmc::rt
