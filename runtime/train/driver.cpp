//===- driver.cpp - main() of a training executable ----------------------===//

#include "train/driver.h"

#include "base/cpu_check.h"
#include "base/error.h"
#include "cli/config.h"
#include "cli/info.h"
#include "cli/launcher_error_file.h"
#include "cli/metrics.h"
#include "cli/profile_report.h"
#include "comm/comm.h"
#include "comm/tensor_parallel.h"
#include "comm/zero.h"
#include "io/hf_checkpoint.h"
#include "io/onnx_export.h"
#include "io/peft_adapter.h"
#include "io/tensorboard.h"
#include "io/weights_payload.h"
#include "memory/device_hooks.h"
#include "memory/peak.h"
#include "model/descriptor.h"
#include "model/hyper.h"
#include "model/lora_merge.h"
#include "model/memory_budget.h"
#include "model/model_state.h"
#include "model/pieces.h"
#include "model/schedule.h"
#include "train/checkpoint.h"
#include "train/dataset.h"
#include "train/eval.h"
#include "train/signals.h"
#include "train/split_step.h"
#include "train/tokens.h"
#include "train/trainer.h"

#include "lmc/runtime/kernels.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <malloc.h>
#include <memory>
#include <new>
#include <optional>
#include <thread>

namespace lmc::rt {

namespace {

std::string programName(int argc, char **argv) {
  if (argc < 1 || !argv[0])
    return "train";
  const char *slash = std::strrchr(argv[0], '/');
  return slash ? slash + 1 : argv[0];
}

/// "znver4 (uses avx,avx2,...)": the CPU the code was compiled for.
std::string targetCpuText(const CompiledModel &model) {
  if (!model.targetCpu)
    return "unknown";
  const std::string features = model.targetCpuFeatures;
  return concat(model.targetCpu, " (uses ",
                features.empty() ? "no extension checked" : features, ")");
}

/// --version: how the executable was made and which model it holds (the
/// fingerprint its checkpoints carry).
std::string versionText(const CompiledModel &model) {
  const std::string_view descriptor = model.descriptor;
  char fingerprint[32];
  std::snprintf(fingerprint, sizeof fingerprint, "%016llx",
                static_cast<unsigned long long>(
                    modelFingerprint(descriptor, model.weightsSize)));
  std::string info = model.buildInfo ? model.buildInfo : "";
  size_t newline = info.find('\n');
  std::string compiler = info.substr(0, newline);
  std::string command =
      newline == std::string::npos ? "" : info.substr(newline + 1);
  return concat("compiled by: ", compiler.empty() ? "unknown" : compiler,
                "\ncommand: ", command.empty() ? "unknown" : command,
                "\nmodel fingerprint: ", fingerprint,
                "\ncompiled for CPU: ", targetCpuText(model), "\n");
}

std::vector<const TensorSpec *> evalInputSpecs(const Descriptor &desc) {
  std::vector<const TensorSpec *> specs;
  for (const TensorSpec &arg : desc.evalArgs)
    if (arg.role == Role::Input)
      specs.push_back(&arg);
  return specs;
}

std::unique_ptr<BatchSource> loadTrainData(const Config &config,
                                           const Descriptor &desc) {
  std::vector<const TensorSpec *> inputs = desc.trainArgsWithRole(Role::Input);
  if (!config.tokens.empty())
    return std::make_unique<TokenDataset>(
        TokenDataset::load(config.tokens, inputs, "--tokens"));
  return std::make_unique<Dataset>(
      Dataset::load(config.inputs, inputs, "--input"));
}

std::unique_ptr<Evaluator> makeEvaluator(const Config &config,
                                         const Descriptor &desc,
                                         StepFn evalStep) {
  if (!config.evalTokens.empty())
    return std::make_unique<Evaluator>(
        desc,
        std::make_unique<TokenDataset>(TokenDataset::load(
            config.evalTokens, evalInputSpecs(desc), "--eval-tokens")),
        evalStep, config.evalSteps);
  if (!config.evalInputs.empty())
    return std::make_unique<Evaluator>(
        desc,
        Dataset::load(config.evalInputs, evalInputSpecs(desc), "--eval-input"),
        evalStep, config.evalSteps);
  return nullptr;
}

/// The flags, each falling back to the compiled default schedule.
Schedule makeSchedule(const Config &config, const Descriptor &desc,
                      const HyperParams &hyper) {
  const ScheduleDefaults compiled = desc.schedule.value_or(ScheduleDefaults());
  Schedule schedule;
  schedule.kind = config.schedule.value_or(compiled.kind);
  schedule.lr = hyper.lr;
  schedule.lrMin = config.lrMin.value_or(compiled.lrMin.value_or(0));
  schedule.warmup = config.warmup.value_or(compiled.warmup.value_or(0));
  schedule.totalSteps =
      config.scheduleSteps.value_or(compiled.steps.value_or(config.steps));
  schedule.decaySteps =
      config.decaySteps ? config.decaySteps : compiled.decaySteps;
  LMC_CHECK(schedule.lrMin <= hyper.lr, "--lr-min ", schedule.lrMin,
            " is above the learning rate ", hyper.lr);
  return schedule;
}

/// The model and data groups of a model compiled for a mesh (null for
/// other models).
struct TensorParallelGroups {
  std::unique_ptr<Communicator> model, data;
  TensorParallelGroups() = default;
  TensorParallelGroups(TensorParallelGroups &&) = default;
  ~TensorParallelGroups() {
    if (model)
      setModelGroup(nullptr); // the compiled steps must not outlive it
  }
};

TensorParallelGroups splitTensorParallel(const Descriptor &desc,
                                         Communicator &comm) {
  const int64_t m = desc.modelParallel;
  if (m == 1)
    return {};
  LMC_CHECK(comm.size() % m == 0, "the model was compiled for --mesh ",
            "model=", m, ": start a multiple of ", m,
            " processes (mpirun -np N), not ", comm.size());
  TensorParallelGroups groups;
  const int rank = comm.rank();
  groups.model = comm.split(/*color=*/int(rank / m), /*key=*/int(rank % m));
  groups.data = comm.split(/*color=*/int(rank % m), /*key=*/int(rank / m));
  setModelGroup(groups.model.get());
  return groups;
}

/// Every process starts from rank 0's parameters, state and buffers (as
/// PyTorch's DDP broadcasts them), whatever each one loaded.
void broadcastState(Communicator &comm, ModelState &state) {
  if (comm.size() == 1)
    return;
  for (size_t i = 0; i < state.params().size(); ++i)
    comm.broadcast(state.param(i).data(), state.params()[i]->byteSize());
  // A sharded state is each process's own range (ZeRO-1).
  if (!state.stateShard())
    for (size_t i = 0; i < state.states().size(); ++i)
      comm.broadcast(state.state(i).data(), state.states()[i]->byteSize());
  broadcastBuffers(comm, state);
}

/// The peak MFU is reported against, printed once with its source:
/// --peak-flops, else the hardware's (memory/peak.h), with the rate the
/// matmul kernel achieves beside it; nothing when no peak is known.
std::optional<double> announcePeakFlops(const Config &config,
                                        const std::string &precision) {
  double achieved = measureMatmulFlops(precision);
  if (config.peakFlops) {
    std::printf("MFU is against %.1f GFLOP/s (--peak-flops); the %s matmul "
                "kernel achieves %.1f GFLOP/s here\n",
                *config.peakFlops / 1e9, precision.c_str(), achieved / 1e9);
    return config.peakFlops;
  }
  PeakFlops peak =
      hardwarePeakFlops(precision, int(lmc_rt_thread_count()));
  if (peak.flops <= 0) {
    std::printf("MFU is not reported: %s (set it with --peak-flops); the %s "
                "matmul kernel achieves %.1f GFLOP/s here\n",
                peak.source.c_str(), precision.c_str(), achieved / 1e9);
    return std::nullopt;
  }
  std::printf("MFU is against a peak of %.1f GFLOP/s: %s (set it with "
              "--peak-flops); the %s matmul kernel achieves %.1f GFLOP/s "
              "here (%.0f%% of the peak)\n",
              peak.flops / 1e9, peak.source.c_str(), precision.c_str(),
              achieved / 1e9, 100 * achieved / peak.flops);
  return peak.flops;
}

/// The products' parts are compiled in (lmc --matmul-parts, by default the
/// compiling machine's cores): on a machine with more threads they use no
/// more than that many, which is said once instead of left to be found.
void noteMatmulParts(int64_t parts, int64_t threads, bool report) {
  if (!report || threads <= parts || parts >= 16)
    return;
  int64_t wanted = 1;
  while (wanted * 2 <= std::min<int64_t>(threads, 16))
    wanted *= 2;
  std::printf("note: a matrix product runs on at most %lld of the %lld "
              "threads: this executable was compiled with --matmul-parts "
              "%lld (the compiling machine's cores by default); compile with "
              "--matmul-parts %lld to share products among more\n",
              (long long)parts, (long long)threads, (long long)parts,
              (long long)wanted);
}

/// Refuses a run whose estimated memory need exceeds --memory-budget, else
/// this process's share of the physical memory.
void checkMemory(const Config &config, const Descriptor &desc,
                 const Communicator &comm, const LaunchInfo &launch) {
  uint64_t budget = config.memoryBudget.value_or(0);
  std::string source = "--memory-budget";
  if (!config.memoryBudget) {
    budget = physicalMemory() / uint64_t(std::max(1, launch.localSize));
    source = launch.localSize > 1
                 ? concat("physical memory shared by ", launch.localSize,
                          " processes on this machine")
                 : std::string("physical memory");
  }
  const bool zero = config.zeroStage == 1;
  if (budget > 0)
    checkMemoryBudget(estimateMemory(desc,
                                     config.gradAccum > 1 || comm.size() > 1 ||
                                         zero,
                                     zero ? comm.size() : 1),
                      budget, source);
}

/// The runtime's threads: --threads, or the cores shared with the other
/// local processes; and the parts each product is cut into.
void setThreads(const Config &config, const Descriptor &desc,
                const LaunchInfo &launch, bool report) {
  lmc_rt_set_matmul_parts(desc.matmulParts);
  if (config.threads)
    lmc_rt_set_threads(static_cast<int>(std::min<int64_t>(*config.threads, 1024)));
  else
    lmc_rt_set_threads(std::max(
        1, int(std::thread::hardware_concurrency()) / launch.localSize));
  noteMatmulParts(desc.matmulParts, lmc_rt_thread_count(), report);
}

/// What decides whether a flag can take effect in this run.
RunFacts runFacts(const Config &config, const Descriptor &desc,
                  const Communicator &comm) {
  RunFacts facts;
  facts.schedule =
      config.schedule.value_or(desc.schedule.value_or(ScheduleDefaults()).kind);
  facts.profileRegions = !desc.profileRegions.empty();
  facts.processes = comm.size();
  facts.randomKey = std::any_of(
      desc.trainArgs.begin(), desc.trainArgs.end(), [](const TensorSpec &arg) {
        return arg.role == Role::Hyper && arg.name == kRngKeyHyper;
      });
  return facts;
}

/// Refuses output flags this executable cannot honour, before any work.
void checkOutputFlags(const Config &config, const Descriptor &desc,
                      const CompiledModel &model) {
  // A LoRA executable's files: the adapters (--save, --save-adapter), or
  // with --merge-adapter the merged model; the ONNX model and a Hugging
  // Face checkpoint have no place for adapters.
  LMC_CHECK(!desc.lora || config.mergeAdapter || config.exportOnnxPath.empty(),
            "--export-onnx: this executable trains LoRA adapters (lmc "
            "--lora) and the ONNX model has no place for them: add "
            "--merge-adapter (the adapters merged into their weights), or "
            "write them with --save-adapter DIR (PEFT's format)");
  LMC_CHECK(!desc.lora || config.mergeAdapter || config.saveHfDir.empty(),
            "--save-hf: this executable trains LoRA adapters (lmc --lora) "
            "and the checkpoint has no place for them: add --merge-adapter "
            "(the adapters merged into their weights), or write them with "
            "--save-adapter DIR (PEFT's format)");
  LMC_CHECK(desc.lora || config.saveAdapterDir.empty(),
            "--save-adapter writes LoRA adapters, and this executable has "
            "none: compile with lmc --lora MODULES, or use --save");
  LMC_CHECK(desc.lora || !config.mergeAdapter,
            "--merge-adapter merges LoRA adapters, and this executable has "
            "none: compile with lmc --lora MODULES, or drop it");
  LMC_CHECK(config.exportOnnxPath.empty() || model.onnx,
            "--export-onnx needs a model compiled from an ONNX file");
  LMC_CHECK(config.gradAccum == 1 || desc.hasSplitStep(),
            "--grad-accum needs a model with grad_step/apply_step");
}

/// What --init read, and where from.
struct InitialValues {
  LoadedInit loaded;
  /// The checkpoint's directory (its config.json goes with --save-hf).
  std::string directory;
};

/// --init: a safetensors file or a Hugging Face checkpoint (a PEFT adapter
/// directory for a LoRA executable), loaded into `state`; --save-hf writes
/// the trained tensors back under its names, beside its config.
InitialValues loadInitialValues(const Config &config, const Descriptor &desc,
                                ModelState &state, bool isRoot) {
  InitialValues init;
  if (config.initPath.empty())
    return init;
  HfCheckpoint checkpoint = readHfCheckpoint(config.initPath);
  LMC_CHECK(config.saveHfDir.empty() || hasHfConfig(checkpoint.directory),
            "--save-hf copies the config.json of the --init checkpoint, "
            "and '",
            checkpoint.directory,
            "' has none: --init the "
            "save_pretrained directory");
  // A PEFT adapter directory: its scaling must be the executable's (the
  // shapes, the rank, are checked with the tensors).
  if (desc.lora)
    if (std::optional<PeftLoraConfig> adapter =
            readPeftLoraConfig(checkpoint.directory)) {
      const LoraSpec &lora = *desc.lora;
      LMC_CHECK(adapter->rank == lora.rank && adapter->alpha == lora.alpha &&
                    adapter->rslora == lora.rslora,
                "--init ", config.initPath, ": the adapters are r ",
                adapter->rank, ", lora_alpha ", adapter->alpha,
                adapter->rslora ? ", rsLoRA" : "",
                "; this executable was compiled with --lora-rank ", lora.rank,
                " --lora-alpha ", lora.alpha, lora.rslora ? " --rslora" : "",
                ": compile with the adapter's");
    }
  init.loaded = state.loadParams(checkpoint, config.initPath);
  init.directory = checkpoint.directory;
  if (isRoot)
    std::printf("%s\n", init.loaded.summary.c_str());
  return init;
}

/// --checkpoint-dir: the checkpointer, and the newest checkpoint's state
/// loaded into `state` (its metadata in `resumed`) when there is one.
std::unique_ptr<Checkpointer>
openCheckpoints(const Config &config, const CompiledModel &model,
                const LaunchInfo &launch, ModelState &state,
                std::optional<CheckpointMeta> &resumed) {
  if (config.checkpointDir.empty()) {
    // torchrun --max-restarts / Slurm --requeue run the same command again.
    if (launch.restartCount > 0)
      std::printf("note: restart %d of the job starts over from step 0: "
                  "with --checkpoint-dir it would go on from the newest "
                  "checkpoint\n",
                  launch.restartCount);
    return nullptr;
  }
  auto checkpoints = std::make_unique<Checkpointer>(
      config.checkpointDir, config.keep,
      modelFingerprint(model.descriptor, model.weightsSize));
  // An existing checkpoint is always resumed from: starting over would
  // overwrite it. --resume in an empty directory starts from step 0.
  if (std::optional<std::string> newest = checkpoints->newest()) {
    LMC_CHECK(config.initPath.empty(), "--init: '", config.checkpointDir,
              "' already holds checkpoints; use another --checkpoint-dir");
    resumed = checkpoints->load(*newest, state);
    std::printf(
        "resuming from %s (step %lld)%s\n", newest->c_str(),
        (long long)resumed->step,
        launch.restartCount > 0
            ? concat(" after restart ", launch.restartCount, " of the job")
                  .c_str()
            : "");
  } else if (config.resume || launch.restartCount > 0) {
    std::printf("no checkpoint in %s; starting from step 0\n",
                config.checkpointDir.c_str());
  }
  return checkpoints;
}

/// The files of a finished run: --save, --save-hf, --save-adapter,
/// --export-onnx. Every process calls it (with a split model the group
/// gathers the tensors); rank 0 writes.
void writeTrainedFiles(const Config &config, const Descriptor &desc,
                       const CompiledModel &model, ModelState &state,
                       const TensorParallelGroups &groups,
                       const InitialValues &init, bool isRoot) {
  // Files hold whole tensors: with a split model, gathered from the group.
  std::vector<AlignedBuffer> gathered;
  std::vector<TensorView> params = state.views(/*withState=*/false);
  if (groups.model &&
      (!config.savePath.empty() || !config.exportOnnxPath.empty() ||
       !config.saveHfDir.empty()))
    params = wholeTensors(desc, params, *groups.model, gathered);
  params = joinPieces(params, desc.joins, gathered);
  // --merge-adapter: the other files hold the model the adapters were
  // merged into.
  const std::vector<TensorView> adapters = params;
  std::vector<AlignedBuffer> merged;
  if (config.mergeAdapter) {
    params = mergedModel(desc, state, merged);
    LMC_CHECK(config.saveHfDir.empty() ||
                  init.loaded.sourceNames.count(desc.frozen().front()->name),
              "--save-hf --merge-adapter writes the merged model under the "
              "names of the base's Hugging Face checkpoint: --init that "
              "checkpoint's directory");
  }
  if (!config.savePath.empty() && isRoot) {
    writeSafetensorsFile(config.savePath, params, {{"format", "pt"}});
    std::printf("saved parameters to %s\n", config.savePath.c_str());
  }
  if (!config.saveHfDir.empty() && isRoot) {
    std::vector<TensorView> named = params;
    for (TensorView &t : named)
      if (auto it = init.loaded.sourceNames.find(t.name);
          it != init.loaded.sourceNames.end())
        t.name = it->second;
    writeHfCheckpoint(config.saveHfDir, named,
                      config.hfShardBytes.value_or(kHfDefaultShardBytes),
                      init.directory);
    std::printf("saved a Hugging Face checkpoint to %s\n",
                config.saveHfDir.c_str());
  }
  if (!config.saveAdapterDir.empty() && isRoot) {
    const LoraSpec &lora = *desc.lora;
    // PEFT's fan_in_fan_out is one flag for all: the weights' layout, the
    // same for every adapted weight (a dynamo export keeps PyTorch's).
    const bool fanInFanOut = !lora.weights.front().outIn;
    for (const LoraSpec::Weight &w : lora.weights)
      LMC_CHECK(w.outIn != fanInFanOut, "--save-adapter: '", w.name,
                "' is stored ", w.outIn ? "[out, in]" : "[in, out]", " and '",
                lora.weights.front().name,
                "' the other way; "
                "PEFT's adapter_config.json has one fan_in_fan_out for all: "
                "adapt the weights of one layout only");
    writePeftAdapter(
        config.saveAdapterDir, adapters,
        {lora.rank, lora.alpha, lora.dropout, lora.rslora, fanInFanOut},
        config.adapterStripPrefix.value_or(""));
    std::printf("saved the LoRA adapters to %s\n",
                config.saveAdapterDir.c_str());
  }
  if (!config.exportOnnxPath.empty() && isRoot) {
    const bool external =
        exportOnnx(config.exportOnnxPath, model.onnx, model.onnxSize, params,
                   config.exportExternalData);
    std::printf(
        "exported the ONNX model with the trained parameters to %s%s%s\n",
        config.exportOnnxPath.c_str(), external ? " (their data in " : "",
        external ? (config.exportOnnxPath + ".data)").c_str() : "");
  }
}

void train(const Config &config, const CompiledModel &model, Communicator &comm,
           const LaunchInfo &launch) {
  Descriptor desc = parseDescriptor(model.descriptor, model.weightsSize);
  if (config.info) {
    std::fputs(formatModelInfo(desc).c_str(), stdout);
    std::printf("compiled for CPU: %s\nthis CPU: %s (%s)\n",
                targetCpuText(model).c_str(), cpuBrand().c_str(),
                cpuLevel().c_str());
    return;
  }
  LMC_CHECK(!desc.trainArgsWithRole(Role::Input).empty(),
            "the model takes no inputs; nothing to train on");

  const bool isRoot = comm.rank() == 0;
  setThreads(config, desc, launch, isRoot);
  checkOutputFlags(config, desc, model);
  checkFlagsTakeEffect(config, runFacts(config, desc, comm));
  checkMemory(config, desc, comm, launch);
  // A tensor-parallel model: groups of modelParallel consecutive ranks split
  // the parameters; the groups are data parallel with each other.
  TensorParallelGroups groups = splitTensorParallel(desc, comm);
  Communicator &dataGroup = groups.data ? *groups.data : comm;
  std::optional<StateShard> shard;
  if (config.zeroStage == 1) {
    LMC_CHECK(desc.hasChunkStep() && model.chunkStep,
              "--zero 1 needs a model with chunk_step (models with dynamic "
              "loss scaling, --precision f16, have none: ZeRO-1 does not "
              "support loss scaling yet)");
    shard = zeroShard(desc, dataGroup.rank(), dataGroup.size());
    std::printf("ZeRO-1: optimizer state sharded over %d processes (process "
                "0 keeps %zu of %zu floats per state slot)\n",
                dataGroup.size(), shard->end - shard->begin, shard->floats);
  }
  // The initial values: mapped from the executable's own file and read
  // once into the parameter buffers, then unmapped — unless the model has
  // frozen tensors (lmc --lora's base), which are read where they lie, so
  // the mapping lives as long as the state.
  std::optional<WeightsPayload> payload;
  if (model.weightsInPayload)
    payload.emplace(WeightsPayload::map(
        "/proc/self/exe", model.weightsSize,
        modelFingerprint(model.descriptor, model.weightsSize)));
  const unsigned char *weights = payload ? payload->data() : model.weights;
  const bool borrowFrozen =
      !desc.frozen().empty() &&
      reinterpret_cast<uintptr_t>(weights) % AlignedBuffer::kAlignment == 0;
  ModelState state(desc, weights, groups.model ? groups.model->rank() : 0,
                   std::move(shard), borrowFrozen);
  if (!borrowFrozen)
    payload.reset();
  const InitialValues init = loadInitialValues(config, desc, state, isRoot);
  HyperParams hyper =
      resolveHyperParams(desc, config.lr, config.clipGradNorm);
  Schedule schedule = makeSchedule(config, desc, hyper);
  std::unique_ptr<BatchSource> data = loadTrainData(config, desc);
  std::unique_ptr<Evaluator> evaluator =
      makeEvaluator(config, desc, model.evalStep);
  LMC_CHECK(config.evalEvery == 0 || evaluator,
            "--eval-every needs --eval-input or --eval-tokens data");
  LMC_CHECK(config.evalSteps == 0 || evaluator,
            "--eval-steps needs --eval-input or --eval-tokens data");

  std::optional<CheckpointMeta> resumed;
  std::unique_ptr<Checkpointer> checkpoints =
      openCheckpoints(config, model, launch, state, resumed);
  // Tensor parallel: the first model group makes the checkpoints (its
  // processes gather the split tensors, rank 0 writes) and evaluates (rank 0
  // reports).
  const bool inFirstModelGroup = groups.model && dataGroup.rank() == 0;
  if (checkpoints && groups.model)
    checkpoints->gatherOver(desc, *groups.model, isRoot);
  // ZeRO-1: every process takes part in gathering the optimizer state.
  if (checkpoints && state.stateShard())
    checkpoints->gatherStatesOver(dataGroup, isRoot);

  broadcastState(dataGroup, state);

  // Only rank 0 reports and writes files.
  MetricsFile metrics(isRoot ? config.metricsPath : std::string(),
                      resumed ? std::optional<int64_t>(resumed->step)
                              : std::nullopt);
  std::unique_ptr<EventWriter> tensorboard;
  if (!config.logDir.empty() && isRoot)
    tensorboard = std::make_unique<EventWriter>(config.logDir);
  // Graceful SIGTERM/SIGINT only when there is somewhere to save to.
  std::optional<StopSignals> signals;
  if (checkpoints)
    signals.emplace();

  TrainerSinks sinks;
  if (isRoot)
    sinks = {evaluator.get(), &metrics, tensorboard.get(), checkpoints.get()};
  else if (inFirstModelGroup) // eval_step's collectives need the group
    sinks = {evaluator.get(), nullptr, nullptr, checkpoints.get()};
  else if (state.stateShard())
    sinks.checkpoints = checkpoints.get();
  // MFU against --peak-flops, else against the hardware's peak, stated
  // once with where it comes from (only rank 0 reports).
  Config runConfig = config;
  if (isRoot)
    runConfig.peakFlops = announcePeakFlops(config, desc.precision);
  StepFns steps{model.trainStep, model.gradStep, model.applyStep,
                model.chunkStep};
  Trainer trainer(desc, runConfig, steps, dataGroup, state, *data, hyper,
                  schedule, sinks);
  if (resumed)
    trainer.resumeFrom(*resumed);
  RunEnd end = trainer.run();
  if (config.profile && isRoot) {
    std::printf("%s", formatProfile(desc.profileRegions, profileTimes(),
                                    trainer.profiledSteps())
                          .c_str());
    std::fflush(stdout);
  }
  metrics.close();
  if (tensorboard)
    tensorboard->close();
  if (end != RunEnd::Completed)
    return;
  writeTrainedFiles(config, desc, model, state, groups, init, isRoot);
}

} // namespace

namespace {

/// The compiled step allocates its intermediates on every call (one-shot
/// bufferization) and frees them before returning. With glibc's defaults
/// the freed memory goes back to the kernel (trimming, and mmap for large
/// blocks), so every step page-faults its activations in again: a quarter
/// of the GPT benchmark's step time. Keep it in the heap instead.
void keepStepMemoryResident() {
  constexpr int kMaxMmapThreshold = 32 << 20; // glibc's upper limit, 64-bit
  mallopt(M_MMAP_THRESHOLD, kMaxMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

/// Executables compiled with --target cuda link the device library:
/// choose this process's GPU before any buffer is allocated, or explain
/// why there is none.
void selectDevice() {
  if (!lmc_rt_device_init)
    return;
  char message[512] = {0};
  LMC_CHECK(lmc_rt_device_init(message, sizeof(message)) == 0, message);
}

} // namespace

int runTrainingMain(int argc, char **argv, const CompiledModel &model) {
  keepStepMemoryResident();
  const std::string program = programName(argc, argv);
  std::unique_ptr<Communicator> comm;
  // With several processes an error on one must end them all (the others
  // would wait in a collective forever).
  auto fail = [&](const char *message, int status = 1) {
    writeLauncherErrorFile(message);
    if (comm && comm->size() > 1) {
      std::fprintf(stderr, "error: process %d of %d: %s\n", comm->rank(),
                   comm->size(), message);
      std::fflush(stdout);
      comm->abort(status);
    }
    std::fprintf(stderr, "error: %s\n", message);
    std::fflush(stdout);
    return status;
  };
  try {
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    Config config;
    try {
      config = parseFlags(args);
    } catch (const UsageError &e) {
      std::fprintf(stderr, "error: %s\nrun '%s --help' for usage\n", e.what(),
                   program.c_str());
      return 2;
    }
    if (config.help) {
      std::fputs(usageText(program).c_str(), stdout);
    } else if (config.version) {
      std::fputs(versionText(model).c_str(), stdout);
    } else {
      if (!config.info) { // --info describes the model on any CPU or device
        if (model.targetCpu) {
          std::string wrongCpu =
              checkTargetCpu(model.targetCpu, model.targetCpuFeatures);
          if (!wrongCpu.empty())
            return fail(wrongCpu.c_str());
        }
        selectDevice();
      }
      LaunchInfo launch = detectLaunch(std::getenv);
      comm = connect(launch, config.collectiveTimeout);
      if (comm->rank() != 0)
        LMC_CHECK_SYS(std::freopen("/dev/null", "w", stdout),
                      "cannot silence stdout of process ", comm->rank());
      train(config, model, *comm, launch);
    }
    // Output piped to a full disk must not look like success.
    LMC_CHECK_SYS(std::fflush(stdout) == 0, "cannot write to stdout");
    return 0;
  } catch (const UsageError &e) {
    // A flag that cannot take effect with this model or launch
    // (checkFlagsTakeEffect): a usage error like a malformed one.
    return fail(e.what(), 2);
  } catch (const std::bad_alloc &) {
    return fail("out of memory");
  } catch (const std::exception &e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown internal error");
  }
}

} // namespace lmc::rt
