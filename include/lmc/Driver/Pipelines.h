//===- Pipelines.h - lmc pass pipelines and compilation phases --*- C++ -*-===//

#ifndef LMC_DRIVER_PIPELINES_H
#define LMC_DRIVER_PIPELINES_H

#include "lmc/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace lmc {

/// The phases `lmc --compile-to=` can stop after, in pipeline order.
enum class Phase {
  Import,
  Lora,
  Loss,
  Autodiff,
  Optimizer,
  Precision,
  Shard,
  Lower,
  LLVM
};

/// The training phases' options. Those of one pass are that pass's own
/// options struct (generated from Passes.td): lmc's flags bind to their
/// fields once (tools/lmc/Options.cpp) and the pipeline hands the structs
/// to the passes as they are.
struct TrainingOptions {
  /// lmc-attach-loss: `loss` (cross_entropy | mse | output:NAME), `output`
  /// (--loss-from), `ignoreIndex`.
  LmcAttachLossOptions loss;
  /// lmc-optimizer: the optimizer, its hyperparameters, clipping and the
  /// loss scale's growth interval.
  LmcOptimizerOptions optimizer;
  /// Regexes over parameter names (whole-name match): keep matching
  /// parameters constant / train only the matching ones (lmc-autodiff,
  /// lmc-fuse-attention; with adapters, lmc-lora's `train`).
  std::string freeze;
  std::string train;
  /// lmc-lora: the target modules (empty: no adapters), rank, alpha,
  /// rank-stabilized scaling, dropout, the seed of A's values and the
  /// frozen base's type (its `train` comes from `train` above).
  LmcLoraOptions lora;
  /// With a mesh, the --shard rules: fused projections a rule splits become
  /// one parameter per piece (lmc-split-fused-projections).
  std::string shard;
  /// lmc-mixed-precision: the precision and the regex over op/parameter
  /// names kept in f32.
  LmcMixedPrecisionOptions precision;
  /// Dynamic loss scaling (lmc-autodiff's loss-scale, lmc-optimizer's
  /// scaler): on for f16.
  bool lossScaling = false;
  /// Activation checkpointing (lmc-rematerialize's policy): none | per-block
  /// | per-block:N | selective.
  std::string remat = "none";
  /// Masked attention as one op (lmc-fuse-attention): for f32 steps on the
  /// CPU without a mesh.
  bool fuseAttention = false;
  /// Layer normalization as one op (lmc-fuse-layer-norm): likewise.
  bool fuseLayerNorm = false;
};

/// The process mesh and the user's parameter shardings (docs/distributed.md).
struct ShardingOptions {
  std::string mesh;  // "data=2,model=2"; empty: no sharding
  std::string shard; // GLOB=AXES rules separated by ';'
};

/// Every dialect lmc's pipelines create, and all lmc passes.
/// Where the compiled step runs: this CPU (OpenMP loops when
/// `multithreaded`) or, with `cuda`, an NVIDIA GPU (docs/cuda.md).
struct LoweringTarget {
  bool multithreaded = false;
  /// CPU code with the loop structure of the CUDA target's kernels
  /// (lmc-linalg-to-gpu-loops, run sequentially): checks that structure on
  /// whole models without a GPU (`lmc --gpu-loops-on-cpu`).
  bool gpuLoopsOnCpu = false;
  /// Every planned buffer filled with 0xFF bytes where it is allocated
  /// (lmc-plan-buffers{poison}; `lmc --poison-step-buffers`, CPU only).
  bool poisonBuffers = false;
  struct Cuda {
    std::string arch = "sm_90"; // --gpu-arch
    std::string toolkit;        // the CUDA toolkit (ptxas, libdevice)
    /// PTX text in the gpu.binary instead of a fatbin (for inspection).
    bool ptx = false;
  };
  std::optional<Cuda> cuda;
};

struct DslTrainSettings;

/// Makes a DSL file's train block the defaults of `training`: a setting
/// replaces the option unless `givenOnCommandLine(flag)` says the user
/// passed that flag (flag names as lmc spells them: "loss", "optimizer",
/// "lr", "momentum", "beta1", "beta2", "eps", "weight-decay",
/// "clip-grad-norm", "precision").
void applyDslTrainDefaults(
    const DslTrainSettings &settings, TrainingOptions &training,
    llvm::function_ref<bool(llvm::StringRef flag)> givenOnCommandLine);

void registerLmcDialects(mlir::DialectRegistry &registry);
/// lmc's and MLIR's passes, and lmc's pipelines (registerLmcPipelines).
void registerLmcPasses();
/// `lmc-train-pipeline`, `lmc-lower-cpu` and `lmc-lower-cuda`: the pipelines
/// below by name, for lmc-opt.
void registerLmcPipelines();

/// Import → `phase`: attach the loss, differentiate, build the entry points,
/// inline them into self-contained functions, apply the precision policy.
void buildLmcTrainingPipeline(mlir::OpPassManager &pm,
                              const TrainingOptions &options, Phase last);

/// lmc on tensors → LLVM dialect with the bare-pointer calling convention
/// (docs/runtime-abi.md): linalg, sharding (with a mesh: annotation,
/// upstream propagation and SPMD partitioning), fusion, bufferization, BLAS
/// calls, loops. `last` = Shard stops after partitioning. `multithreaded`:
/// big loop nests run as OpenMP loops (the executable links libomp; the
/// in-process JIT of the test tools does not).
void buildLmcLoweringPipeline(mlir::OpPassManager &pm,
                              const ShardingOptions &sharding = {},
                              Phase last = Phase::LLVM,
                              const LoweringTarget &target = {});

} // namespace lmc

#endif // LMC_DRIVER_PIPELINES_H
