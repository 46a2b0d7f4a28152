//===- Pipelines.cpp - lmc pass pipelines ---------------------------------===//

#include "lmc/Driver/Pipelines.h"
#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Lowering/Passes.h"
#include "lmc/Transforms/Passes.h"
#include "lmc/Transforms/ReshapeSharding.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

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
  registerLmcLoweringPasses();
  registerLmcPipelines();
}

void buildLmcTrainingPipeline(OpPassManager &pm, const TrainingOptions &options,
                              Phase last) {
  if (last == Phase::Import)
    return;
  // With adapters, lmc-lora decides what is frozen (tagging the base) and
  // --train only adds parameters to the adapters.
  const bool lora = !options.lora.targets.empty();
  if (lora) {
    LmcLoraOptions adapters = options.lora;
    adapters.train = options.train;
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
  pm.addPass(createLmcAttachLoss(options.loss));
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
  pm.addPass(createLmcOptimizer(options.optimizer));
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (last == Phase::Optimizer)
    return;
  pm.addPass(createLmcMixedPrecision(options.precision));
}

namespace {

/// Host code from math/arith/cf/func to the LLVM dialect, on both targets.
void addHostToLlvm(OpPassManager &pm) {
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // bf16 conversions as integer arithmetic (no libgcc/compiler-rt helpers,
  // the same rounding on every CPU); maximumf stays vectorizable.
  pm.addPass(createLmcExpandArith());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions functions;
  functions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(functions));
}

/// Tensors to buffers, both targets. On the CPU, cheap products are
/// recomputed in the sums that read them and sums to a scalar share the
/// threads in fixed chunks (the GPU path, and its emulation on the CPU,
/// split reductions their own way).
void addBufferization(OpPassManager &pm, bool cpuLoops) {
  OpPassManager &perFunction = pm.nest<func::FuncOp>();
  LmcFuseElementwiseOptions fuse;
  fuse.intoSums = cpuLoops;
  perFunction.addPass(createLmcFuseElementwise(fuse));
  if (cpuLoops) {
    perFunction.addPass(createLmcDerivativesInForward());
    perFunction.addPass(createLmcChunkReductions());
    perFunction.addPass(createLmcHoistReductions());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLmcUntieFills());
  pm.addPass(createLmcAttentionToRuntime());
  pm.addPass(createLmcLayerNormToRuntime());
  pm.addPass(createLmcConvolutionToRuntime());
  pm.addPass(createLmcDropOptimizationBarriers());
  pm.addPass(createLmcUntieResults());
  // Params and optimizer state updated over their old values: one copy of
  // each in the runtime instead of two.
  pm.addPass(createLmcTieUpdatesToArguments());
  // Elementwise results over the inputs that die with them.
  pm.addPass(createLmcElementwiseInPlace());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createLmcDropInPlaceResults());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createLmcMarkGradientsReady());
}

/// The CPU target after bufferization: matmuls and the fused kernels call
/// the runtime, every other linalg op becomes a loop nest (the parallel
/// dimensions of big ones OpenMP work-sharing loops when multithreaded).
void addCpuLowering(OpPassManager &pm, const LoweringTarget &target) {
  const bool multithreaded = target.multithreaded && !target.gpuLoopsOnCpu;
  pm.addPass(createLmcMatmulToRuntime());
  pm.addPass(createLmcStridedCopiesToLinalg());
  if (target.gpuLoopsOnCpu) {
    pm.addPass(createLmcLinalgToGpuLoops());
  } else {
    pm.addPass(createLmcCollapseInnerLoops());
    if (multithreaded) {
      pm.addPass(createConvertLinalgToParallelLoopsPass());
      pm.addPass(createLmcParallelizeLoops());
    } else {
      pm.addPass(createConvertLinalgToLoopsPass());
    }
  }
  // The step's arena comes from the runtime (lmc_rt_step_arena: one mapping
  // made at run time), not a global: a global in .bss caps the executable
  // near 2 GiB (x86-64's small code model) and GPT-2's activations at batch
  // 4 do not fit under it.
  LmcPlanBuffersOptions plan;
  plan.arenaFromRuntime = true;
  plan.poison = target.poisonBuffers;
  pm.addPass(createLmcPlanBuffers(plan));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createLmcOutlineLoopNests());
  pm.addPass(createLmcHoistInvariantLoads());
  // Brackets for the executable's --profile (docs/training-executable.md).
  pm.addPass(createLmcProfileRegions());
  if (multithreaded) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // Inlines the alloca scope the conversion wraps each iteration in (the
    // bodies allocate nothing; scf-to-cf would leave the scope with several
    // blocks, which it cannot have).
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createLmcApproximateMath());
  addHostToLlvm(pm);
  // After the functions: its own function patterns would pass memref
  // descriptors where the callers pass bare pointers.
  if (multithreaded)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// The CUDA target after bufferization (docs/cuda.md): matmuls call cuBLAS
/// through the runtime, every other linalg op becomes one kernel launch,
/// the kernels are compiled for `cuda.arch` by the toolkit's ptxas (every
/// launch checked against the resources it reports) and embedded in the
/// host code, which calls the runtime's mgpu* launch functions. The step's
/// buffers are views of one arena of device memory (lmc-plan-buffers); what
/// the plan cannot place comes from the runtime's managed allocator
/// (`use-generic-functions`).
void addCudaLowering(OpPassManager &pm, const LoweringTarget::Cuda &cuda) {
  LmcMatmulToRuntimeOptions matmuls;
  matmuls.kernelPrefix = "lmc_rt_cuda_matmul_";
  pm.addPass(createLmcMatmulToRuntime(matmuls));
  pm.addPass(createLmcLinalgToGpuLoops());
  // Device memory planned at compile time: the kernels' buffers are views
  // of one arena the runtime allocates once.
  LmcPlanBuffersOptions plan;
  plan.arenaFromRuntime = true;
  pm.addPass(createLmcPlanBuffers(plan));
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One module per host function: the toolkit's per-module cost (a ptxas
  // process, a library load) paid 3 times, not 13,500.
  pm.addPass(createLmcMergeGpuModules());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions nvvm;
  nvvm.chip = cuda.arch;
  // sm_90 needs PTX 7.8 or newer; LLVM's NVPTX backend would default to 6.0.
  nvvm.features = "+ptx80";
  nvvm.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(nvvm));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createStripDebugInfoPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  kernels.addPass(arith::createArithExpandOpsPass(expand));
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefs;
  memrefs.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefs));
  addHostToLlvm(pm);
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // PTX first: lmc-assemble-gpu-kernels runs ptxas itself to read its
  // report and check every launch against it.
  GpuModuleToBinaryPassOptions toPtx;
  toPtx.compilationTarget = "isa";
  toPtx.toolkitPath = cuda.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(toPtx));
  LmcAssembleGpuKernelsOptions assemble;
  assemble.format = cuda.ptx ? GpuBinaryFormat::Ptx : GpuBinaryFormat::Fatbin;
  assemble.toolkit = cuda.toolkit;
  pm.addPass(createLmcAssembleGpuKernels(assemble));
}

} // namespace

void buildLmcLoweringPipeline(OpPassManager &pm,
                              const ShardingOptions &sharding, Phase last,
                              const LoweringTarget &target) {
  const bool cpuLoops = !target.cuda && !target.gpuLoopsOnCpu;
  ConvertLmcToLinalgOptions toLinalg;
  // Upstream sharding propagation sees through linalg ops but not loops
  // or slices.
  toLinalg.shardable = !sharding.mesh.empty();
  // A gather index out of range ends the run (the host calls the runtime;
  // a GPU kernel cannot, and a split table's rows are not the whole
  // dimension): those keep the clamp.
  toLinalg.checkIndices = cpuLoops && sharding.mesh.empty();
  // The runtime's convolution kernels run on the host; sharded steps keep
  // loop nests that sharding propagation sees through.
  toLinalg.convolutionsToRuntime = cpuLoops && sharding.mesh.empty();
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
  addBufferization(pm, cpuLoops);
  if (target.cuda)
    addCudaLowering(pm, *target.cuda);
  else
    addCpuLowering(pm, target);
}

} // namespace lmc
