//===- Options.cpp - lmc's command-line options ---------------------------===//
//
// `lmc --help` lists lmc's options in the groups below (LLVM prints option
// categories in name order: the names are chosen to read in that order),
// each with its default. Every option LLVM and MLIR register (pass-manager,
// timing, printing, debug flags) is hidden, not removed: `--help-hidden`
// lists them and they keep working.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "lmc/Driver/TargetCpu.h"

#include "lmc/Transforms/Passes.h"

#include "lmc/Support/EnumChoices.h"
#include "lmc/Transforms/Mesh.h"
#include "lmc/Version.h"
#include "lmc/runtime/optimizers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace lmc::cli {

namespace {

cl::OptionCategory inputCategory("Input and shapes");
cl::OptionCategory trainingCategory("Loss and optimizer");
cl::OptionCategory memoryCategory("Memory (activations)");
cl::OptionCategory precisionCategory("Mixed precision");
cl::OptionCategory parallelCategory("Parallelism (tensor-parallel mesh)");
cl::OptionCategory targetCategory("Target (where the step runs)");
cl::OptionCategory outputCategory("What lmc writes (output and phases)");

} // namespace

/// What the training flags set, bound where the passes read them: each
/// flag's default is its pass option's (Passes.td).
lmc::TrainingOptions trainingFlags;

cl::opt<std::string> inputPath(cl::Positional,
                               cl::desc("<model.onnx|.onnxtxt|.lmc|.mlir>"),
                               cl::Required, cl::cat(inputCategory));
cl::opt<int64_t> batch(
    "batch",
    cl::desc("batch size: binds a symbolic batch dimension, or rebinds the "
             "fixed one of an export without dynamic_axes (default: the "
             "model's own)"),
    cl::value_desc("N"), cl::init(0), cl::cat(inputCategory));
cl::opt<uint64_t> maxParamBytes(
    "max-param-bytes",
    cl::desc("refuse models whose parameters need more bytes (0: no limit; "
             "default 8 GiB)"),
    cl::value_desc("bytes"), cl::init(uint64_t(8) << 30),
    cl::cat(inputCategory));

cl::opt<std::string, true>
    loss("loss",
         cl::desc("cross_entropy | mse | output:NAME (a "
                  "scalar output; default cross_entropy)"),
         cl::location(trainingFlags.loss.loss), cl::cat(trainingCategory));
cl::opt<std::string, true> lossOutput(
    "loss-from",
    cl::desc("model output cross_entropy or mse is computed from (default: "
             "the first)"),
    cl::value_desc("output"), cl::location(trainingFlags.loss.output),
    cl::cat(trainingCategory));
cl::opt<int64_t, true> ignoreIndex(
    "ignore-index",
    cl::desc("--loss cross_entropy: labels equal to this value count "
             "neither in the loss nor in its mean (default -100, PyTorch's "
             "and Hugging Face's ignore_index)"),
    cl::value_desc("label"), cl::location(trainingFlags.loss.ignoreIndex),
    cl::cat(trainingCategory));
cl::opt<std::string> optimizer(
    "optimizer", cl::desc("sgd | momentum | adam | adamw (default adamw)"),
    cl::init("adamw"), cl::cat(trainingCategory));
cl::opt<double, true>
    lr("lr",
       cl::desc("learning rate (default 1e-3; the executable's "
                "--lr overrides it)"),
       cl::location(trainingFlags.optimizer.lr), cl::cat(trainingCategory));
cl::opt<double, true> momentum("momentum",
                               cl::desc("--optimizer momentum: its factor "
                                        "(default 0.9)"),
                               cl::location(trainingFlags.optimizer.momentum),
                               cl::cat(trainingCategory));
cl::opt<double, true> beta1("beta1", cl::desc("adam/adamw beta1 (default 0.9)"),
                            cl::location(trainingFlags.optimizer.beta1),
                            cl::cat(trainingCategory));
cl::opt<double, true> beta2("beta2",
                            cl::desc("adam/adamw beta2 (default 0.999)"),
                            cl::location(trainingFlags.optimizer.beta2),
                            cl::cat(trainingCategory));
cl::opt<double, true> eps("eps", cl::desc("adam/adamw epsilon (default 1e-8)"),
                          cl::location(trainingFlags.optimizer.eps),
                          cl::cat(trainingCategory));
cl::opt<double, true> weightDecay(
    "weight-decay",
    cl::desc("weight decay: decoupled for adamw, L2 otherwise (default 0, "
             "as the Hugging Face Trainer's; torch.optim.AdamW's is 0.01)"),
    cl::location(trainingFlags.optimizer.weightDecay),
    cl::cat(trainingCategory));
cl::opt<double, true> clipGradNorm(
    "clip-grad-norm",
    cl::desc("clip the global gradient norm at this value (default 0: off)"),
    cl::location(trainingFlags.optimizer.clipGradNorm),
    cl::cat(trainingCategory));
cl::opt<std::string, true> freeze(
    "freeze",
    cl::desc("keep parameters whose whole name matches this regex constant "
             "(default: none)"),
    cl::value_desc("regex"), cl::location(trainingFlags.freeze),
    cl::cat(trainingCategory));
cl::opt<std::string, true>
    train("train",
          cl::desc("train only parameters whose whole name matches (default: "
                   "all; with --lora: those that train beside the adapters)"),
          cl::value_desc("regex"), cl::location(trainingFlags.train),
          cl::cat(trainingCategory));

cl::opt<std::string, true>
    lora("lora",
         cl::desc("fine-tune low-rank adapters (LoRA, as PEFT) on these linear "
                  "layers' weights and freeze the rest of the model: module "
                  "names (q_proj,v_proj: a name or a name's last parts), globs "
                  "over whole module names, or all-linear (default: none)"),
         cl::value_desc("modules"), cl::location(trainingFlags.lora.targets),
         cl::cat(trainingCategory));
cl::opt<int64_t, true> loraRank("lora-rank",
                                cl::desc("--lora's rank r (default 8, PEFT's)"),
                                cl::location(trainingFlags.lora.rank),
                                cl::cat(trainingCategory));
cl::opt<double, true>
    loraAlpha("lora-alpha",
              cl::desc("--lora's alpha: the adapters are scaled by alpha / r "
                       "(default 8, PEFT's)"),
              cl::location(trainingFlags.lora.alpha),
              cl::cat(trainingCategory));
cl::opt<bool, true> rslora("rslora",
                           cl::desc("--lora scaled by alpha / sqrt(r) "
                                    "(rank-stabilized LoRA)"),
                           cl::location(trainingFlags.lora.rslora),
                           cl::cat(trainingCategory));
cl::opt<double, true> loraDropout(
    "lora-dropout",
    cl::desc("--lora's dropout on the adapters' input in training steps "
             "(default 0)"),
    cl::location(trainingFlags.lora.dropout), cl::cat(trainingCategory));
cl::opt<std::string> basePrecision(
    "base-precision",
    cl::desc("f32 | bf16: with --lora, the type the frozen base is held in "
             "(bf16: half its memory, widened to f32 for each product; "
             "default f32)"),
    cl::value_desc("type"), cl::init("f32"), cl::cat(trainingCategory));
cl::opt<uint64_t, true> loraSeed(
    "lora-seed",
    cl::desc("seed of the adapters' initial A values (default 0; --init "
             "replaces them)"),
    cl::location(trainingFlags.lora.seed), cl::cat(trainingCategory));

cl::opt<std::string, true> remat(
    "remat",
    cl::desc("none | per-block | per-block:<segments> | selective: "
             "recompute forward values in the backward pass instead of "
             "keeping them, all but the cuts of the residual stream "
             "(per-block; per-block:N only in the first N segments between "
             "cuts, selective after them) or those larger than it, such as "
             "attention scores (selective); gradients unchanged (default "
             "none: keeps every one, fused attention's exponentials too)"),
    cl::value_desc("policy"), cl::location(trainingFlags.remat),
    cl::cat(memoryCategory));

cl::opt<uint64_t> activationBudget(
    "activation-budget",
    cl::desc("choose --remat by itself: none or selective if its step "
             "activations (the compile-time estimate --info prints) fit in "
             "this many bytes, else per-block:N with the fewest segments N "
             "that fit; an error if per-block does not (default: off, "
             "--remat decides)"),
    cl::value_desc("bytes"), cl::init(0), cl::cat(memoryCategory));

cl::opt<std::string> precision(
    "precision",
    cl::desc("f32 | bf16 | f16: matmuls take bf16/f16 inputs and accumulate "
             "in f32; f16 with dynamic loss scaling (default f32)"),
    cl::init("f32"), cl::cat(precisionCategory));
cl::opt<bool> lossScaling(
    "loss-scaling",
    cl::desc("dynamic loss scaling compiled into the step (always on with "
             "--precision f16; default off)"),
    cl::init(false), cl::cat(precisionCategory));
cl::opt<int64_t, true> lossScaleGrowthInterval(
    "loss-scale-growth-interval",
    cl::desc("clean steps before the loss scale doubles (default 2000)"),
    cl::value_desc("N"),
    cl::location(trainingFlags.optimizer.lossScaleGrowthInterval),
    cl::cat(precisionCategory));
cl::opt<std::string, true> keepF32(
    "keep-f32",
    cl::desc("with bf16/f16: keep matmuls in f32 whose op or parameter name "
             "matches (default: none)"),
    cl::value_desc("regex"), cl::location(trainingFlags.precision.keepF32),
    cl::cat(precisionCategory));

cl::opt<std::string> mesh(
    "mesh",
    cl::desc("process mesh of tensor parallelism, e.g. model=2 or "
             "data=2,model=2 (needs --shard; plain data parallelism needs no "
             "mesh: mpirun -np N ./train; default: none)"),
    cl::value_desc("axes"), cl::init(""), cl::cat(parallelCategory));
cl::list<std::string> shard(
    "shard",
    cl::desc("GLOB=AXES: split matching parameters, one mesh axis or _ per "
             "dimension (e.g. '*.fc1.weight=model,_'); repeatable"),
    cl::value_desc("rule"), cl::cat(parallelCategory));

cl::opt<std::string> target(
    "target",
    cl::desc("cpu | cuda: this CPU, or an NVIDIA GPU (docs/cuda.md; default "
             "cpu)"),
    cl::init("cpu"), cl::cat(targetCategory));
cl::opt<std::string> cpu(
    "cpu",
    cl::desc("the CPU the executable is compiled for, in clang's -march "
             "names: native (this machine's), x86-64-v2, x86-64-v3, "
             "x86-64-v4, skylake-avx512, icelake-server, sapphirerapids, "
             "znver3, znver4, ... ('help' lists them); the executable "
             "refuses to start on a CPU without its extensions (default "
             "native)"),
    cl::value_desc("name"), cl::init("native"), cl::cat(targetCategory));
cl::opt<std::string> cpuFeatures(
    "cpu-features",
    cl::desc("extensions added to or removed from --cpu's, in LLVM's "
             "names: +avx512bf16,-avx512f,... (default none)"),
    cl::value_desc("+a,-b"), cl::init(""), cl::cat(targetCategory));
cl::opt<std::string> gpuArch(
    "gpu-arch",
    cl::desc("--target cuda: GPU architecture, sm_80, sm_90, ... (default "
             "sm_90)"),
    cl::init("sm_90"), cl::cat(targetCategory));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("--target cuda: CUDA toolkit (ptxas, libdevice, cudart, cuBLAS; "
             "default " LMC_CUDA_TOOLKIT ")"),
    cl::value_desc("dir"), cl::init(LMC_CUDA_TOOLKIT),
    cl::cat(targetCategory));
cl::opt<std::string> gpuFormat(
    "gpu-format",
    cl::desc("--target cuda: what the executable embeds, fatbin (SASS for "
             "--gpu-arch) or ptx (default fatbin)"),
    cl::init("fatbin"), cl::cat(targetCategory));
cl::opt<int64_t> matmulParts(
    "matmul-parts",
    cl::desc("the most parts a matrix product is cut into for the threads "
             "to share: a power of two from 1 to 16 (default: this "
             "machine's cores, rounded down to one). The executable gives "
             "the same bits on any --threads; a different budget may "
             "change the last bits. More parts than threads cost time: "
             "each part repacks an operand"),
    cl::value_desc("N"), cl::init(0), cl::cat(targetCategory));
cl::opt<bool> fuseAttention(
    "fuse-attention",
    cl::desc("compute masked attention (scores, mask, softmax, product "
             "with the values) as one op in blocks of queries, skipping the "
             "keys a causal mask hides, and its gradient likewise: for f32 "
             "steps on the CPU without --mesh (default true; false keeps "
             "the separate ops)"),
    cl::init(true), cl::cat(targetCategory));
cl::opt<bool> fuseLayerNorm(
    "fuse-layer-norm",
    cl::desc("compute layer normalization (over the last axis) and its "
             "gradient a row at a time in one pass each instead of the "
             "separate reductions and elementwise ops: for f32 steps on the "
             "CPU without --mesh (default true; false keeps the separate "
             "ops)"),
    cl::init(true), cl::cat(targetCategory));
cl::opt<bool> gpuLoopsOnCpu(
    "gpu-loops-on-cpu",
    cl::desc("CPU executable whose loops have the structure of the "
             "--target cuda kernels, run sequentially (a check without a "
             "GPU)"),
    cl::init(false), cl::Hidden, cl::cat(targetCategory));
cl::opt<bool> poisonStepBuffers(
    "poison-step-buffers",
    cl::desc("fill each of the step's buffers with 0xFF bytes (f32 NaN) "
             "where it is allocated, so that a read before any write shows "
             "in the results (a check; slower steps)"),
    cl::init(false), cl::Hidden, cl::cat(targetCategory));

cl::opt<std::string> outputPath("o",
                                cl::desc("output file (default a.out; "
                                         "printed IR: stdout)"),
                                cl::value_desc("path"), cl::init(""),
                                cl::cat(outputCategory));
cl::opt<lmc::Phase> compileTo(
    "compile-to",
    cl::desc("stop after a phase and print its MLIR (default: all phases)"),
    cl::values(clEnumValN(lmc::Phase::Import, "import", "imported model"),
               clEnumValN(lmc::Phase::Lora, "lora",
                          "low-rank adapters added (--lora)"),
               clEnumValN(lmc::Phase::Loss, "loss", "loss attached"),
               clEnumValN(lmc::Phase::Autodiff, "autodiff", "gradients"),
               clEnumValN(lmc::Phase::Optimizer, "optimizer",
                          "train_step / eval_step"),
               clEnumValN(lmc::Phase::Precision, "precision",
                          "mixed-precision policy applied"),
               clEnumValN(lmc::Phase::Shard, "shard",
                          "linalg, partitioned for --mesh (SPMD)"),
               clEnumValN(lmc::Phase::Lower, "lower", "LLVM dialect"),
               clEnumValN(lmc::Phase::LLVM, "llvm", "LLVM IR")),
    cl::init(lmc::Phase::LLVM), cl::cat(outputCategory));
cl::opt<Artifact> emit(
    "emit", cl::desc("artifact to produce (default exe)"),
    cl::values(clEnumValN(Artifact::MLIR, "mlir", "MLIR of --compile-to"),
               clEnumValN(Artifact::LLVM, "llvm", "LLVM IR"),
               clEnumValN(Artifact::Object, "obj", "object file"),
               clEnumValN(Artifact::Executable, "exe", "training executable")),
    cl::init(Artifact::Executable), cl::cat(outputCategory));
cl::opt<bool> quiet("quiet",
                    cl::desc("no progress lines, even on a terminal"),
                    cl::init(false), cl::cat(outputCategory));
cl::opt<bool> verbose(
    "v",
    cl::desc("print each phase and its time, also when stderr is not a "
             "terminal (default: on a terminal, for compiles over 2 s)"),
    cl::init(false), cl::cat(outputCategory));

namespace {

const cl::OptionCategory *const lmcCategories[] = {
    &inputCategory,  &trainingCategory, &memoryCategory, &precisionCategory,
    &parallelCategory, &targetCategory, &outputCategory};

/// Hides (cl::Hidden, not ReallyHidden as cl::HideUnrelatedOptions does)
/// every option outside lmc's categories and LLVM's generic ones (--help,
/// --version), so that `--help-hidden` still lists them.
void hideForeignOptions() {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    bool ours = llvm::any_of(option->Categories, [](cl::OptionCategory *c) {
      return llvm::is_contained(lmcCategories, c);
    });
    static const llvm::StringRef genericOptions[] = {
        "help",    "help-list",     "help-hidden",      "help-list-hidden",
        "version", "print-options", "print-all-options"};
    bool generic = llvm::is_contained(genericOptions, entry.first);
    if (!ours && !generic && option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
}

void printVersion(llvm::raw_ostream &os) { os << versionLine() << "\n"; }

} // namespace

void parseCommandLine(int argc, char **argv) {
  // `lmc --cpu help` lists the names without an input, as `clang
  // -mcpu=help` does.
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    bool help = arg == "--cpu=help" || arg == "-cpu=help" ||
                ((arg == "--cpu" || arg == "-cpu") && i + 1 < argc &&
                 llvm::StringRef(argv[i + 1]) == "help");
    if (help) {
      llvm::outs() << lmc::listTargetCpus();
      std::exit(0);
    }
  }
  hideForeignOptions();
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lmc: ahead-of-time training compiler\n\n"
      "  lmc model.onnx -o train --batch 8    # a training executable\n"
      "  ./train --input x=x.npy --input labels=y.npy --steps 100\n\n"
      "  --help-hidden also lists LLVM's and MLIR's options.\n");
}

bool givenOnCommandLine(llvm::StringRef flag) {
  auto &options = cl::getRegisteredOptions();
  auto it = options.find(flag);
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

std::string cpuKernelsUnavailableBy(const lmc::ShardingOptions &sharding,
                                    const lmc::TrainingOptions &training) {
  if (target == "cuda")
    return "--target cuda";
  if (gpuLoopsOnCpu)
    return "--gpu-loops-on-cpu";
  if (!sharding.mesh.empty())
    return "a --mesh";
  const lmc::Precision precision = training.precision.precision;
  if (precision != lmc::Precision::F32)
    return "--precision " + lmc::stringifyPrecision(precision).str();
  return "";
}

bool readChoiceFlags(lmc::TrainingOptions &training) {
  bool ok = true;
  if (std::optional<lmc::Optimizer> kind = lmc::optimizerNamed(optimizer)) {
    training.optimizer.optimizer = *kind;
  } else {
    llvm::errs() << "lmc: error: unknown optimizer '" << optimizer
                 << "'; expected " << lmc::optimizerChoices() << "\n";
    ok = false;
  }
  using lmc::Precision;
  if (std::optional<Precision> type = lmc::symbolizePrecision(precision)) {
    training.precision.precision = *type;
  } else {
    llvm::errs()
        << "lmc: error: unknown precision '" << precision << "'; expected "
        << lmc::odsEnumNames<Precision, lmc::getMaxEnumValForPrecision()>()
        << "\n";
    ok = false;
  }
  std::optional<Precision> base = lmc::symbolizePrecision(basePrecision);
  if (base && *base != Precision::F16) {
    training.lora.basePrecision = *base;
  } else {
    llvm::errs() << "lmc: error: --base-precision must be f32 or bf16, not '"
                 << basePrecision << "'\n";
    ok = false;
  }
  return ok;
}

bool checkFlagCombinations(bool mlirInput,
                           const lmc::ShardingOptions &sharding,
                           const lmc::TrainingOptions &training) {
  bool ok = true;
  auto refuse = [&](llvm::StringRef message) {
    llvm::errs() << "lmc: " << message << "\n";
    ok = false;
  };
  auto given = [](llvm::StringRef flag) { return givenOnCommandLine(flag); };

  if (mlirInput)
    for (llvm::StringRef flag : {"batch", "max-param-bytes"})
      if (given(flag))
        refuse(("--" + flag +
                " applies to ONNX and .lmc inputs; the shapes and "
                "parameters of a .mlir input are fixed in its text")
                   .str());

  // Optimizer hyperparameters only the chosen optimizer reads.
  const lmc::Optimizer kind = training.optimizer.optimizer;
  const std::string optimizer = lmc::optimizerName(kind);
  if (given("momentum") && kind != lmc::Optimizer::Momentum)
    refuse("--momentum applies to --optimizer momentum (SGD with momentum), "
           "not " +
           optimizer + "; pass --optimizer momentum or drop it");
  for (llvm::StringRef flag : {"beta1", "beta2", "eps"})
    if (given(flag) && !lmc::isAdam(kind))
      refuse(("--" + flag + " applies to --optimizer adam and adamw, not " +
              optimizer + "; drop it or choose one of those")
                 .str());
  const std::string &loss = training.loss.loss;
  if (given("ignore-index") && loss != "cross_entropy")
    refuse("--ignore-index applies to --loss cross_entropy, not " + loss +
           "; drop it");
  if (given("loss-from") && llvm::StringRef(loss).starts_with("output:"))
    refuse("--loss-from names the output cross_entropy or mse is computed "
           "from; --loss " +
           loss + " is that output already: drop --loss-from");

  // Low-rank adapters.
  if (training.lora.targets.empty()) {
    for (llvm::StringRef flag :
         {"lora-rank", "lora-alpha", "rslora", "lora-dropout", "lora-seed",
          "base-precision"})
      if (given(flag))
        refuse(("--" + flag + " applies to --lora: pass --lora MODULES too")
                   .str());
    if (given("compile-to") && compileTo == lmc::Phase::Lora)
      refuse("--compile-to=lora shows what --lora adds: pass --lora "
             "MODULES too");
  } else {
    if (!training.freeze.empty())
      refuse("--lora freezes every parameter but the adapters, so --freeze "
             "has nothing to add: drop it (--train REGEX keeps other "
             "parameters training beside the adapters)");
    if (!sharding.mesh.empty())
      refuse("--lora with --mesh: the adapters are not split over a model "
             "axis; compile without --mesh (data parallelism needs no "
             "mesh)");
  }

  // Precision.
  if (given("keep-f32") && training.precision.precision == lmc::Precision::F32)
    refuse("--keep-f32 keeps matmuls in f32 under --precision bf16 or f16; "
           "with f32 every matmul is f32 already");
  if (given("loss-scale-growth-interval") && !training.lossScaling)
    refuse("--loss-scale-growth-interval needs dynamic loss scaling: pass "
           "--loss-scaling (on by itself with --precision f16)");

  // Activation memory.
  if (training.remat != "none" && !lmc::parseRematPolicy(training.remat))
    refuse("--remat " + training.remat +
           " is not a policy: use none, per-block, per-block:<segments> or "
           "selective");
  if (given("activation-budget") && given("remat"))
    refuse("--activation-budget chooses the --remat policy by itself: pass "
           "one of them");
  if (given("activation-budget") && activationBudget == 0)
    refuse("--activation-budget needs a byte count above 0");
  if (training.remat != "none" && !sharding.mesh.empty())
    refuse("--remat with --mesh: upstream sharding propagation does not "
           "see through the barriers that keep recomputed values apart; "
           "compile without --remat, or without --mesh (data parallelism "
           "needs no mesh)");

  // Parallelism: a mesh that splits nothing does nothing.
  if (!sharding.mesh.empty()) {
    std::string why;
    llvm::raw_string_ostream whyStream(why);
    mlir::FailureOr<lmc::Mesh> parsed = lmc::parseMesh(sharding.mesh, whyStream);
    if (failed(parsed))
      refuse(why);
    else if (parsed->model <= 1)
      refuse("--mesh " + sharding.mesh +
             " has no model axis to split the parameters over: data "
             "parallelism needs no mesh (compile without it and run "
             "mpirun -np N ./train); for tensor parallelism use --mesh "
             "model=M with --shard rules");
    else if (sharding.shard.empty())
      refuse("--mesh " + sharding.mesh +
             " without a --shard rule splits no parameter: every process "
             "of a model group would compute the same step; add rules such "
             "as --shard '*.fc1.weight=model,_' (docs/distributed.md)");
  } else if (given("shard")) {
    refuse("--shard needs a mesh with a model axis to split over: add "
           "--mesh model=M");
  }

  // Target.
  if (target != "cuda")
    for (llvm::StringRef flag : {"gpu-arch", "cuda-path", "gpu-format"})
      if (given(flag))
        refuse(("--" + flag + " applies to --target cuda; this compile is for " +
                target.getValue() + ": pass --target cuda or drop it")
                   .str());
  if (given("matmul-parts") && target == "cuda")
    refuse("--matmul-parts cuts the CPU's products for its threads; with "
           "--target cuda each product is one cuBLAS call: drop it");
  if (given("matmul-parts") &&
      (matmulParts < 1 || matmulParts > 16 ||
       (matmulParts & (matmulParts - 1)) != 0))
    refuse("--matmul-parts " + std::to_string(matmulParts) +
           " is not a power of two from 1 to 16");
  if (gpuLoopsOnCpu && target == "cuda")
    refuse("--gpu-loops-on-cpu builds a CPU executable; drop --target cuda "
           "or the flag");
  if (poisonStepBuffers && target == "cuda")
    refuse("--poison-step-buffers fills buffers from the host, which the "
           "GPU's device memory is not; check the kernels with "
           "--gpu-loops-on-cpu --poison-step-buffers instead");
  std::string unfusedBy = cpuKernelsUnavailableBy(sharding, training);
  if (given("fuse-attention") && fuseAttention && !unfusedBy.empty())
    refuse("--fuse-attention runs attention on the CPU's runtime in f32, "
           "without a mesh: this compile has " +
           unfusedBy + "; drop --fuse-attention");
  if (given("fuse-layer-norm") && fuseLayerNorm && !unfusedBy.empty())
    refuse("--fuse-layer-norm runs layer normalization on the CPU's runtime "
           "in f32, without a mesh: this compile has " +
           unfusedBy + "; drop --fuse-layer-norm");

  // Output.
  bool printsMlir = compileTo < lmc::Phase::LLVM || emit == Artifact::MLIR;
  if (given("compile-to") && given("emit") && printsMlir &&
      emit != Artifact::MLIR)
    refuse(std::string("--compile-to stops after a phase and prints its "
                       "MLIR, so --emit=") +
           (emit == Artifact::LLVM     ? "llvm"
            : emit == Artifact::Object ? "obj"
                                       : "exe") +
           " cannot take effect: drop one of them (or pass --emit=mlir)");
  if (printsMlir || emit == Artifact::LLVM)
    for (llvm::StringRef flag : {"cpu", "cpu-features"})
      if (given(flag))
        refuse(("--" + flag +
                " chooses the machine code, which this compile does not "
                "produce (it prints " +
                (printsMlir ? "MLIR" : "LLVM IR") +
                "): drop it or pass --emit=obj or --emit=exe")
                   .str());
  if (quiet && verbose)
    refuse("--quiet and -v contradict each other: pass one");
  return ok;
}

std::string versionLine() { return LMC_VERSION_LINE; }

std::string commandLine(int argc, char **argv) {
  std::string line = "lmc";
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    bool plain = !arg.empty() &&
                 arg.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;") ==
                     llvm::StringRef::npos;
    line += ' ';
    if (plain) {
      line += arg.str();
      continue;
    }
    line += '\'';
    for (char c : arg) {
      if (c == '\'')
        line += "'\\''";
      else
        line += c;
    }
    line += '\'';
  }
  return line;
}

} // namespace lmc::cli
