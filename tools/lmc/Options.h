//===- Options.h - lmc's command-line options -----------------------------===//
//
// The options of the lmc driver, grouped as `lmc --help` shows them, and
// the checks that refuse a flag which cannot take effect (DEVELOPERS.md: no
// flag is ever silently ignored).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_TOOLS_LMC_OPTIONS_H
#define LMC_TOOLS_LMC_OPTIONS_H

#include "lmc/Driver/Pipelines.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace lmc::cli {

namespace cl = llvm::cl;

// Input and shapes.
extern cl::opt<std::string> inputPath;
extern cl::opt<int64_t> batch;
extern cl::opt<uint64_t> maxParamBytes;
// Loss, optimizer, adapters, memory and precision: the flags bound to
// `trainingFlags` (each where the pass that reads it takes it) and the
// ones read into it by readChoiceFlags or by the driver.
extern lmc::TrainingOptions trainingFlags;
extern cl::opt<std::string> optimizer, basePrecision, precision;
extern cl::opt<uint64_t> activationBudget;
extern cl::opt<bool> lossScaling;
// Parallelism.
extern cl::opt<std::string> mesh;
extern cl::list<std::string> shard;
// Target.
extern cl::opt<std::string> target, cpu, cpuFeatures, gpuArch, cudaPath,
    gpuFormat;
extern cl::opt<bool> gpuLoopsOnCpu, poisonStepBuffers, fuseAttention,
    fuseLayerNorm;
extern cl::opt<int64_t> matmulParts;
// Output and phases.
extern cl::opt<std::string> outputPath;
extern cl::opt<lmc::Phase> compileTo;
enum class Artifact { MLIR, LLVM, Object, Executable };
extern cl::opt<Artifact> emit;
extern cl::opt<bool> quiet, verbose;

/// Parses argv. `--help` shows lmc's own options only; LLVM's and MLIR's
/// stay reachable with `--help-hidden` (as clang and iree-compile do).
/// `--version` names lmc's version, commit and LLVM.
void parseCommandLine(int argc, char **argv);

/// Whether the user passed `flag` (lmc's spelling, e.g. "lr").
bool givenOnCommandLine(llvm::StringRef flag);

/// What keeps the runtime's CPU kernels (fused attention and layer norm)
/// out of this compile (`--target cuda`, `--gpu-loops-on-cpu`, a mesh, a
/// precision other than f32), or "" when lmc-fuse-attention and
/// lmc-fuse-layer-norm run: one answer for the driver and the refusal of
/// an explicit `--fuse-attention` or `--fuse-layer-norm`.
std::string cpuKernelsUnavailableBy(const lmc::ShardingOptions &sharding,
                                    const lmc::TrainingOptions &training);

/// Reads --optimizer, --precision and --base-precision into `training`;
/// false after printing what was not one of the choices.
bool readChoiceFlags(lmc::TrainingOptions &training);

/// Refuses flags that cannot take effect together (each message names the
/// flag, why and what to do), given the options in effect: the command
/// line's over a `.lmc` input's train block. Returns false after printing
/// every refusal.
bool checkFlagCombinations(bool mlirInput, const lmc::ShardingOptions &sharding,
                           const lmc::TrainingOptions &training);

/// "lmc 0.5.0 (git 1bdc621…), built with LLVM/MLIR 22.1.8".
std::string versionLine();

/// The command line as the user typed it (for a training executable's
/// `--version`).
std::string commandLine(int argc, char **argv);

} // namespace lmc::cli

#endif // LMC_TOOLS_LMC_OPTIONS_H
