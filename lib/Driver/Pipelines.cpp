//===- Pipelines.cpp - lmc pass pipelines ---------------------------------===//

#include "lmc/Driver/Pipelines.h"
#include "lmc/Conversion/Passes.h"
#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Transforms/Passes.h"
#include "lmc/Transforms/ReshapeSharding.h"

#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace lmc {

void registerLmcDialects(DialectRegistry &registry) {
  registry.insert<LmcDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerReshapeShardingModels(registry);
  // The CUDA target: gpu-module-to-binary translates kernels to LLVM IR and
  // PTX, and the host module embeds the binary (gpu.binary).
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void registerLmcPasses() {
  registerAllPasses();
  registerLmcTransformsPasses();
  registerLmcConversionPasses();
}

void buildLmcTrainingPipeline(OpPassManager &pm, const TrainingOptions &options,
                              Phase last) {
  if (last == Phase::Import)
    return;
  // With adapters, lmc-lora decides what is frozen (tagging the base) and
  // --train only adds parameters to the adapters.
  const bool lora = !options.lora.targets.empty();
  if (lora) {
    LmcLoraOptions adapters;
    adapters.targets = options.lora.targets;
    adapters.rank = options.lora.rank;
    adapters.alpha = options.lora.alpha;
    adapters.rslora = options.lora.rslora;
    adapters.dropout = options.lora.dropout;
    adapters.seed = options.lora.seed;
    adapters.train = options.train;
    adapters.basePrecision = options.lora.basePrecision;
    pm.addPass(createLmcLora(adapters));
  }
  if (last == Phase::Lora)
    return;
  const std::string freeze = lora ? "" : options.freeze;
  const std::string train = lora ? "" : options.train;
  if (options.fuseAttention) {
    LmcFuseAttentionOptions fuse;
    fuse.freeze = freeze;
    fuse.train = train;
    // Without remat every forward value the backward reads is kept; so are
    // attention's exponentials (what the unfused graph keeps as its
    // probabilities). Under remat they are recomputed.
    fuse.keepExponentials = options.remat == "none";
    pm.addPass(createLmcFuseAttention(fuse));
  }
  if (options.fuseLayerNorm)
    pm.addPass(createLmcFuseLayerNorm());
  if (!options.shard.empty()) {
    LmcSplitFusedProjectionsOptions split;
    split.shard = options.shard;
    pm.addPass(createLmcSplitFusedProjections(split));
  }
  LmcAttachLossOptions loss;
  loss.loss = options.loss;
  loss.output = options.lossOutput;
  loss.ignoreIndex = options.ignoreIndex;
  pm.addPass(createLmcAttachLoss(loss));
  if (last == Phase::Loss)
    return;
  LmcAutodiffOptions autodiff;
  autodiff.freeze = freeze;
  autodiff.train = train;
  autodiff.lossScale = options.lossScaling;
  pm.addPass(createLmcAutodiff(autodiff));
  if (options.remat != "none") {
    LmcRematerializeOptions remat;
    remat.policy = options.remat;
    pm.addPass(createLmcRematerialize(remat));
  }
  if (last == Phase::Autodiff)
    return;
  LmcOptimizerOptions optimizer;
  optimizer.optimizer = options.optimizer;
  optimizer.lr = options.lr;
  optimizer.momentum = options.momentum;
  optimizer.beta1 = options.beta1;
  optimizer.beta2 = options.beta2;
  optimizer.eps = options.eps;
  optimizer.weightDecay = options.weightDecay;
  optimizer.clipGradNorm = options.clipGradNorm;
  optimizer.lossScaleGrowthInterval = options.lossScaleGrowthInterval;
  pm.addPass(createLmcOptimizer(optimizer));
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (last == Phase::Optimizer)
    return;
  LmcMixedPrecisionOptions precision;
  precision.precision = options.precision;
  precision.keepF32 = options.keepF32;
  pm.addPass(createLmcMixedPrecision(precision));
}

/// Host code from math/arith/cf/func to the LLVM dialect, on both targets.
constexpr const char *kHostToLlvm =
    "convert-math-to-llvm,"
    "convert-math-to-libm,"
    // bf16 conversions as integer arithmetic (no libgcc/compiler-rt helpers,
    // the same rounding on every CPU); maximumf stays vectorizable.
    "lmc-expand-arith,"
    "convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv},";

/// The CUDA target after bufferization (docs/cuda.md): matmuls call cuBLAS
/// through the runtime, every other linalg op becomes one kernel launch, the
/// kernels are compiled to a fatbin for `arch` by the toolkit's ptxas (every
/// launch checked against the resources it reports) and embedded in the host code, which calls the runtime's mgpu* launch
/// functions. The step's buffers are views of one arena of device memory
/// (lmc-plan-buffers); what the plan cannot place comes from the runtime's
/// managed allocator (`use-generic-functions`).
std::string cudaLoweringPipeline(const LoweringTarget::Cuda &cuda) {
  return llvm::formatv(
      "lmc-matmul-to-runtime{{kernel-prefix=lmc_rt_cuda_matmul_},"
      "lmc-linalg-to-gpu-loops,"
      // Device memory planned at compile time: the kernels' buffers are
      // views of one arena the runtime allocates once.
      "lmc-plan-buffers{{arena-from-runtime},"
      "convert-parallel-loops-to-gpu,"
      "lower-affine,"
      "canonicalize,"
      "gpu-launch-sink-index-computations,"
      "gpu-kernel-outlining,"
      // One module per host function: the toolkit's per-module cost
      // (a ptxas process, a library load) paid 3 times, not 13,500.
      "lmc-merge-gpu-modules,"
      "convert-scf-to-cf,"
      "expand-strided-metadata,"
      // sm_90 needs PTX 7.8 or newer; LLVM's NVPTX backend would default
      // to 6.0.
      "nvvm-attach-target{{chip={0} features=+ptx80 O=3},"
      "gpu.module(strip-debuginfo,arith-expand{{include-bf16},"
      "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
      "finalize-memref-to-llvm{{use-generic-functions},"
      "{3}"
      "gpu-to-llvm,"
      "reconcile-unrealized-casts,"
      // PTX first: lmc-assemble-gpu-kernels runs ptxas itself to read
      // its report and check every launch against it.
      "gpu-module-to-binary{{format=isa toolkit={2}},"
      "lmc-assemble-gpu-kernels{{format={1} toolkit={2}}",
      cuda.arch, cuda.ptx ? "ptx" : "fatbin", cuda.toolkit, kHostToLlvm);
}

void buildLmcLoweringPipeline(OpPassManager &pm,
                              const ShardingOptions &sharding, Phase last,
                              const LoweringTarget &target) {
  bool multithreaded = target.multithreaded && !target.gpuLoopsOnCpu;
  ConvertLmcToLinalgOptions toLinalg;
  // Upstream sharding propagation sees through linalg ops but not loops
  // or slices.
  toLinalg.shardable = !sharding.mesh.empty();
  // A gather index out of range ends the run (the host calls the runtime;
  // a GPU kernel cannot, and a split table's rows are not the whole
  // dimension): those keep the clamp.
  toLinalg.checkIndices =
      !target.cuda && !target.gpuLoopsOnCpu && sharding.mesh.empty();
  // The runtime's convolution kernels run on the host; sharded steps keep
  // loop nests that sharding propagation sees through.
  toLinalg.convolutionsToRuntime =
      !target.cuda && !target.gpuLoopsOnCpu && sharding.mesh.empty();
  pm.addPass(createConvertLmcToLinalg(toLinalg));
  pm.addPass(createCanonicalizerPass());
  if (!sharding.mesh.empty()) {
    LmcShardAnnotateOptions annotate;
    annotate.mesh = sharding.mesh;
    annotate.shard = sharding.shard;
    pm.addPass(createLmcShardAnnotate(annotate));
    // Forward then backward: shardings reach both the ops after an
    // annotated parameter and the fills and empties feeding those ops.
    shard::ShardingPropagationOptions propagation;
    propagation.traversal = shard::TraversalOrder::ForwardBackward;
    OpPassManager &perFunction = pm.nest<func::FuncOp>();
    perFunction.addPass(shard::createShardingPropagation(propagation));
    perFunction.addPass(createLmcShardComplete());
    perFunction.addPass(shard::createPartition());
    perFunction.addPass(createLmcCollapseBatchMatmuls());
    perFunction.addPass(createLmcScatterAddsToLoops());
    perFunction.addPass(createLmcBucketAllReduces());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (last == Phase::Shard)
    return;
  if (!sharding.mesh.empty())
    pm.addPass(createLmcShardToRuntime());
  // On the CPU, cheap products are recomputed in the sums that read them
  // and sums to a scalar share the threads in fixed chunks (the GPU path,
  // and its emulation on the CPU, split reductions their own way).
  bool cpuLoops = !target.cuda && !target.gpuLoopsOnCpu;
  std::string bufferization =
      std::string(cpuLoops ? "func.func(lmc-fuse-elementwise{into-sums}),"
                           "func.func(lmc-derivatives-in-forward),"
                           "func.func(lmc-chunk-reductions),"
                           "func.func(lmc-hoist-reductions),"
                           : "func.func(lmc-fuse-elementwise),") +
      "canonicalize,cse,"
      "lmc-untie-fills,"
      "lmc-attention-to-runtime,"
      "lmc-layer-norm-to-runtime,"
      "lmc-convolution-to-runtime,"
      "lmc-drop-optimization-barriers,"
      "lmc-untie-results,"
      // Params and optimizer state updated over their old values: one copy
      // of each in the runtime instead of two.
      "lmc-tie-updates-to-arguments,"
      // Elementwise results over the inputs that die with them.
      "lmc-elementwise-in-place,"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "lmc-drop-in-place-results,"
      "buffer-results-to-out-params{hoist-static-allocs "
      "modify-public-functions},"
      "buffer-deallocation-pipeline,"
      "lmc-mark-gradients-ready,";
  if (target.cuda) {
    if (failed(parsePassPipeline(
            bufferization + cudaLoweringPipeline(*target.cuda), pm)))
      llvm::report_fatal_error("lmc: malformed CUDA lowering pipeline");
    return;
  }
  // Spelled as a textual pipeline so that it reads like `lmc-opt` flags and
  // can be replayed there step by step. Multithreaded, the parallel
  // dimensions of big loop nests become OpenMP work-sharing loops.
  std::string pipeline = bufferization + llvm::formatv(
      "lmc-matmul-to-runtime,"
      "lmc-strided-copies-to-linalg,"
      "{0},"
      "{4},"
      "lower-affine,"
      "lmc-outline-loop-nests,"
      "lmc-hoist-invariant-loads,"
      // Brackets for the executable's --profile (docs/training-executable.md).
      "lmc-profile-regions,"
      "{1}"
      "convert-scf-to-cf,"
      "expand-strided-metadata,"
      "finalize-memref-to-llvm,"
      "lmc-approximate-math,"
      "{3}"
      // After the functions: its own function patterns would pass memref
      // descriptors where the callers pass bare pointers.
      "{2}"
      "reconcile-unrealized-casts",
      target.gpuLoopsOnCpu ? "lmc-linalg-to-gpu-loops"
      : multithreaded
          ? "lmc-collapse-inner-loops,convert-linalg-to-parallel-loops,"
            "lmc-parallelize-loops"
          : "lmc-collapse-inner-loops,convert-linalg-to-loops",
      // canonicalize inlines the alloca scope the conversion wraps each
      // iteration in (the bodies allocate nothing; scf-to-cf would leave
      // the scope with several blocks, which it cannot have).
      multithreaded ? "convert-scf-to-openmp,canonicalize," : "",
      multithreaded ? "convert-openmp-to-llvm," : "", kHostToLlvm,
      // The step's arena comes from the runtime (lmc_rt_step_arena: one
      // mapping made at run time), not a global: a global in .bss caps
      // the executable near 2 GiB (x86-64's small code model) and GPT-2's
      // activations at batch 4 do not fit under it.
      target.poisonBuffers ? "lmc-plan-buffers{arena-from-runtime poison}"
                           : "lmc-plan-buffers{arena-from-runtime}").str();
  if (failed(parsePassPipeline(pipeline, pm)))
    llvm::report_fatal_error("lmc: malformed lowering pipeline");
}

} // namespace lmc
