//===- PipelineRegistration.cpp - lmc's pipelines by name, for lmc-opt ----===//
//
// The pipelines `lmc` runs, registered so that `lmc-opt` runs them by name:
//
//   lmc-opt model.mlir --lmc-train-pipeline='optimizer=sgd lr=0.1 until=loss'
//   lmc-opt step.mlir --lmc-lower-cpu=multithreaded
//   lmc-opt step.mlir --lmc-lower-cuda='arch=sm_80 toolkit=/usr/local/cuda'
//
// The options are spelled as lmc's flags are (docs/compiler.md), so that a
// compile can be replayed phase by phase; `--dump-pass-pipeline` shows the
// passes each one adds.
//
//===----------------------------------------------------------------------===//

#include "lmc/Driver/Pipelines.h"
#include "lmc/Support/EnumChoices.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace lmc {
namespace {

namespace cl = llvm::cl;
using PrecisionChoices = OdsEnumChoices<Precision, getMaxEnumValForPrecision()>;

/// The options' defaults: the passes' own (Passes.td), as lmc's flags have.
const TrainingOptions kDefaults;

/// `lmc-train-pipeline`: import → `until`, as buildLmcTrainingPipeline.
struct TrainPipelineOptions : PassPipelineOptions<TrainPipelineOptions> {
  Option<Phase> until{
      *this, "until", cl::desc("the last phase (default precision)"),
      cl::init(Phase::Precision),
      cl::values(clEnumValN(Phase::Lora, "lora", "adapters added"),
                 clEnumValN(Phase::Loss, "loss", "loss attached"),
                 clEnumValN(Phase::Autodiff, "autodiff", "gradients"),
                 clEnumValN(Phase::Optimizer, "optimizer",
                            "optimizer step and entry points"),
                 clEnumValN(Phase::Precision, "precision",
                            "mixed-precision policy applied"))};
  Option<std::string> loss{*this, "loss",
                           cl::desc("cross_entropy | mse | output:NAME"),
                           cl::init(kDefaults.loss.loss)};
  Option<std::string> lossFrom{
      *this, "loss-from",
      cl::desc("the output cross_entropy or mse is computed from")};
  Option<int64_t> ignoreIndex{*this, "ignore-index",
                              cl::desc("cross_entropy's ignore_index"),
                              cl::init(kDefaults.loss.ignoreIndex)};
  Option<Optimizer> optimizer{
      *this, "optimizer", cl::desc("sgd | momentum | adam | adamw"),
      cl::init(kDefaults.optimizer.optimizer), TableChoices<kOptimizerNames>{}};
  Option<double> lr{*this, "lr", cl::init(kDefaults.optimizer.lr)};
  Option<double> momentum{*this, "momentum",
                          cl::init(kDefaults.optimizer.momentum)};
  Option<double> beta1{*this, "beta1", cl::init(kDefaults.optimizer.beta1)};
  Option<double> beta2{*this, "beta2", cl::init(kDefaults.optimizer.beta2)};
  Option<double> eps{*this, "eps", cl::init(kDefaults.optimizer.eps)};
  Option<double> weightDecay{*this, "weight-decay",
                             cl::init(kDefaults.optimizer.weightDecay)};
  Option<double> clipGradNorm{*this, "clip-grad-norm",
                              cl::init(kDefaults.optimizer.clipGradNorm)};
  Option<std::string> freeze{*this, "freeze",
                             cl::desc("regex: parameters kept constant")};
  Option<std::string> train{*this, "train",
                            cl::desc("regex: the only parameters trained")};
  Option<std::string> lora{*this, "lora",
                           cl::desc("adapters on these modules (lmc-lora)")};
  Option<int64_t> loraRank{*this, "lora-rank", cl::init(kDefaults.lora.rank)};
  Option<double> loraAlpha{*this, "lora-alpha", cl::init(kDefaults.lora.alpha)};
  Option<bool> rslora{*this, "rslora", cl::init(kDefaults.lora.rslora)};
  Option<double> loraDropout{*this, "lora-dropout",
                             cl::init(kDefaults.lora.dropout)};
  Option<uint64_t> loraSeed{*this, "lora-seed", cl::init(kDefaults.lora.seed)};
  Option<Precision> basePrecision{
      *this, "base-precision", cl::desc("f32 | bf16"),
      cl::init(kDefaults.lora.basePrecision), PrecisionChoices{}};
  Option<Precision> precision{*this, "precision", cl::desc("f32 | bf16 | f16"),
                              cl::init(kDefaults.precision.precision),
                              PrecisionChoices{}};
  Option<std::string> keepF32{*this, "keep-f32"};
  Option<bool> lossScaling{*this, "loss-scaling",
                           cl::desc("on by itself with precision=f16"),
                           cl::init(false)};
  Option<int64_t> lossScaleGrowthInterval{
      *this, "loss-scale-growth-interval",
      cl::init(kDefaults.optimizer.lossScaleGrowthInterval)};
  Option<std::string> remat{
      *this, "remat",
      cl::desc("none | per-block | per-block:<segments> | selective"),
      cl::init(kDefaults.remat)};
  Option<bool> fuseAttention{*this, "fuse-attention", cl::init(false)};
  Option<bool> fuseLayerNorm{*this, "fuse-layer-norm", cl::init(false)};
  Option<std::string> shard{*this, "shard",
                            cl::desc("GLOB=AXES rules separated by ';'")};

  TrainingOptions training() const {
    TrainingOptions t;
    t.loss.loss = loss;
    t.loss.output = lossFrom;
    t.loss.ignoreIndex = ignoreIndex;
    t.optimizer.optimizer = optimizer;
    t.optimizer.lr = lr;
    t.optimizer.momentum = momentum;
    t.optimizer.beta1 = beta1;
    t.optimizer.beta2 = beta2;
    t.optimizer.eps = eps;
    t.optimizer.weightDecay = weightDecay;
    t.optimizer.clipGradNorm = clipGradNorm;
    t.optimizer.lossScaleGrowthInterval = lossScaleGrowthInterval;
    t.freeze = freeze;
    t.train = train;
    t.lora.targets = lora;
    t.lora.rank = loraRank;
    t.lora.alpha = loraAlpha;
    t.lora.rslora = rslora;
    t.lora.dropout = loraDropout;
    t.lora.seed = loraSeed;
    t.lora.basePrecision = basePrecision;
    t.shard = shard;
    t.precision.precision = precision;
    t.precision.keepF32 = keepF32;
    t.lossScaling = lossScaling || precision == Precision::F16;
    t.remat = remat;
    t.fuseAttention = fuseAttention;
    t.fuseLayerNorm = fuseLayerNorm;
    return t;
  }
};

/// `lmc-lower-cpu`: lmc on tensors → the LLVM dialect for this CPU.
struct CpuLoweringPipelineOptions
    : PassPipelineOptions<CpuLoweringPipelineOptions> {
  Option<bool> multithreaded{
      *this, "multithreaded",
      cl::desc("big loop nests as OpenMP loops (what lmc compiles)"),
      cl::init(false)};
  Option<bool> gpuLoopsOnCpu{
      *this, "gpu-loops-on-cpu",
      cl::desc("the CUDA target's loop structure, run on the CPU"),
      cl::init(false)};
  Option<bool> poisonBuffers{
      *this, "poison-step-buffers",
      cl::desc("planned buffers filled with 0xFF where they are allocated"),
      cl::init(false)};
  Option<std::string> mesh{*this, "mesh",
                           cl::desc("the process mesh: data=2,model=2")};
  Option<std::string> shard{*this, "shard",
                            cl::desc("GLOB=AXES rules separated by ';'")};
  Option<bool> untilShard{
      *this, "until-shard",
      cl::desc("stop after partitioning (lmc --compile-to=shard)"),
      cl::init(false)};
};

/// `lmc-lower-cuda`: lmc on tensors → the LLVM dialect with the kernels
/// compiled for an NVIDIA GPU.
struct CudaLoweringPipelineOptions
    : PassPipelineOptions<CudaLoweringPipelineOptions> {
  Option<std::string> arch{*this, "arch", cl::desc("sm_80, sm_90, ..."),
                           cl::init("sm_90")};
  Option<std::string> toolkit{*this, "toolkit",
                              cl::desc("the CUDA toolkit (ptxas, fatbinary)"),
                              cl::init(LMC_CUDA_TOOLKIT)};
  Option<bool> ptx{*this, "ptx",
                   cl::desc("keep PTX instead of a fatbin (lmc "
                            "--gpu-format=ptx)"),
                   cl::init(false)};
};

} // namespace

void registerLmcPipelines() {
  PassPipelineRegistration<TrainPipelineOptions>(
      "lmc-train-pipeline",
      "lmc's training phases: adapters, loss, gradients, optimizer step, "
      "mixed precision (lmc --compile-to=<until>)",
      [](OpPassManager &pm, const TrainPipelineOptions &options) {
        buildLmcTrainingPipeline(pm, options.training(), options.until);
      });
  PassPipelineRegistration<CpuLoweringPipelineOptions>(
      "lmc-lower-cpu",
      "lmc's training step to the LLVM dialect for the CPU (lmc "
      "--compile-to=lower)",
      [](OpPassManager &pm, const CpuLoweringPipelineOptions &options) {
        LoweringTarget target;
        target.multithreaded = options.multithreaded;
        target.gpuLoopsOnCpu = options.gpuLoopsOnCpu;
        target.poisonBuffers = options.poisonBuffers;
        buildLmcLoweringPipeline(
            pm, ShardingOptions{options.mesh, options.shard},
            options.untilShard ? Phase::Shard : Phase::LLVM, target);
      });
  PassPipelineRegistration<CudaLoweringPipelineOptions>(
      "lmc-lower-cuda",
      "lmc's training step to the LLVM dialect with its kernels compiled "
      "for an NVIDIA GPU (lmc --target cuda --compile-to=lower)",
      [](OpPassManager &pm, const CudaLoweringPipelineOptions &options) {
        LoweringTarget target;
        target.cuda =
            LoweringTarget::Cuda{options.arch, options.toolkit, options.ptx};
        buildLmcLoweringPipeline(pm, {}, Phase::LLVM, target);
      });
}

} // namespace lmc
