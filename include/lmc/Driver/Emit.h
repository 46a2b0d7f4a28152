//===- Emit.h - descriptor, object file and executable emission -*- C++ -*-===//

#ifndef LMC_DRIVER_EMIT_H
#define LMC_DRIVER_EMIT_H

#include "lmc/Driver/TargetCpu.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmc {

/// The model's initial parameter bytes (docs/runtime-abi.md): each
/// parameter's value at its offset, zeros in the alignment gaps between.
/// The values are the module's `lmc.init` attributes, written from where
/// they lie in the MLIRContext: GPT-2 774M's 3.1 GB are held once by the
/// compiler, not copied into a buffer of their own.
struct InitialWeights {
  struct Piece {
    uint64_t offset;
    mlir::DenseElementsAttr value; // a splat is written expanded
  };
  std::vector<Piece> pieces;
  uint64_t size = 0;

  bool empty() const { return size == 0; }
  /// Appends a value at the next offset aligned to `alignment`; returns it.
  uint64_t append(mlir::DenseElementsAttr value, uint64_t alignment);
  /// Writes the `size` bytes to `os`.
  void write(llvm::raw_ostream &os) const;
  /// The `size` bytes in one buffer (weights inside an object file).
  std::vector<char> bytes() const;
};

/// What the runtime needs to know about a compiled model: the descriptor
/// text and the initial parameter bytes (docs/runtime-abi.md).
struct ModelDescription {
  std::string descriptor;
  InitialWeights weights;
  /// The trainable parameters' names, in descriptor order, then the fused
  /// parameters whose pieces they are (the names files hold).
  std::vector<std::string> paramNames;
  /// The input ONNX model without those parameters' initializers, for
  /// --export-onnx (lmc_model_onnx); empty for other inputs.
  std::string onnxModel;
  /// What `./train --version` prints of its making: the compiler's version
  /// line and the command line (lmc_build_info).
  std::string buildInfo;
  /// Per entry point, the slots of its packed buffer list whose results
  /// lowering dropped because they are updated in place (the wrapper
  /// skips them; the runtime still passes a pointer there).
  std::map<std::string, std::vector<int64_t>> inPlaceSlots;
  /// The CPU the code is compiled for and the extensions it may use
  /// (lmc_target_cpu, lmc_target_cpu_features); empty: not recorded.
  std::string targetCpu;
  std::string targetCpuFeatures;
};

/// Reads the tagged entry points of a module after the
/// optimizer phase, then drops the tags (and the large `lmc.init` values).
/// `matmulParts`: the executable's budget of parts per product (lmc
/// --matmul-parts), a `matmul_parts` line when given.
mlir::FailureOr<ModelDescription>
describeModel(mlir::ModuleOp module,
              std::optional<int64_t> matmulParts = std::nullopt);

/// The estimated peak of the training step's intermediates, as the
/// descriptor's `activations` line gives it: the most bytes of grad_step's
/// tensors alive at once, before fusion. Fails on a module before the
/// optimizer phase.
mlir::FailureOr<uint64_t> estimateActivationBytes(mlir::ModuleOp module);

/// Adds what lowering decided to the descriptor: the `mesh` and `split`
/// lines of a module lmc-shard-annotate partitioned (its `lmc.mesh` and
/// `lmc.splits`), and an `arena` line per function lmc-plan-buffers
/// planned (`lmc.arenas`), and an `inplace` line per param or state that
/// the steps update in place (`lmc.in_place`; `lmc.in_place_slots` goes to
/// `inPlaceSlots`).
void describeLowering(mlir::ModuleOp module, ModelDescription &model);

/// Adds `void wrapperName(void **buffers)`, which calls the bare-pointer
/// function `entry` with one data pointer per parameter taken from
/// `buffers` (docs/runtime-abi.md); the pointers in `skippedSlots` (of
/// results updated in place, which `entry` no longer has) are not passed.
void addPackedEntryPoint(llvm::Module &module, llvm::StringRef entry,
                         llvm::StringRef wrapperName,
                         llvm::ArrayRef<int64_t> skippedSlots = {});

/// Translates a module in the LLVM dialect and adds the ABI symbols:
/// `lmc_train_step(void**)`, `lmc_eval_step(void**)`, `lmc_grad_step`,
/// `lmc_apply_step`, the descriptor, the weights and, when there are ones,
/// `lmc_chunk_step` and the ONNX model. With `weightsAsPayload` the
/// weights are not in the module: `lmc_model_weights_in_payload` says
/// they follow the linked executable (appendWeightsPayload).
std::unique_ptr<llvm::Module>
translateWithEntryPoints(mlir::ModuleOp module, llvm::LLVMContext &context,
                         const ModelDescription &model,
                         bool weightsAsPayload = false);

/// Optimizes `module` at -O3 for `cpu` and writes an object file;
/// `enterPhase("LLVM -O3")` and `enterPhase("machine code")` report its two
/// parts (lmc -v).
mlir::LogicalResult
emitObjectFile(mlir::MLIRContext *context, llvm::Module &module,
               llvm::StringRef path, const TargetCpu &cpu,
               llvm::function_ref<void(llvm::StringRef)> enterPhase = nullptr);

/// Links an object file with the lmc runtime into an executable; with
/// `cuda`, also with the CUDA support library, the toolkit's static cudart
/// and cuBLAS (`--target cuda`).
mlir::LogicalResult linkExecutable(mlir::MLIRContext *context,
                                   llvm::ArrayRef<std::string> objectPaths,
                                   llvm::StringRef outputPath,
                                   llvm::StringRef argv0, bool cuda = false);

/// emitObjectFile for an executable, in `objectPaths.size()` parts that
/// are optimized and compiled on parallel threads (llvm::SplitModule,
/// round robin over the functions: the outlined loop nests are
/// independent). The part count is the caller's, not the machine's, so the
/// same compile gives the same code everywhere.
mlir::LogicalResult emitObjectFilesInParallel(
    mlir::MLIRContext *context, llvm::Module &module,
    llvm::ArrayRef<std::string> objectPaths, const TargetCpu &cpu,
    llvm::function_ref<void(llvm::StringRef)> enterPhase = nullptr);

/// The pieces of emitObjectFile (Emit.cpp), for the parallel emission.
/// LLVM's -O3 for `machine`'s CPU. Call limitFullUnrolling() once before,
/// on one thread.
void optimizeForTarget(llvm::Module &module, llvm::TargetMachine &machine);
/// Caps LLVM's full unrolling at 8 iterations unless the command line
/// sets `--unroll-full-max-count`. Uncapped, -O3 unrolled the fill of GPT-2
/// 350M's [16, 1024] softmax statistics (16 rows, then 32 vector
/// iterations of each) into 2048 stores in one block, and the machine
/// scheduler's dependence graph is quadratic in a block's memory ops: half
/// of 350M's LLVM time (51 -> 24 s), none of the step's (the benchmark
/// GPT's step 1-2 % faster; its losses and gradient norms unchanged).
void limitFullUnrolling();
/// "" on success, else what went wrong.
std::string writeObject(llvm::Module &module, llvm::TargetMachine &machine,
                        llvm::StringRef path);

/// Appends the model's initial weights to the linked executable at
/// `path`, page-aligned, followed by the 32-byte trailer the runtime finds
/// them by (docs/runtime-abi.md, "Weights payload"). The weights then need
/// no relocation and no loaded segment: nothing in the executable's format
/// caps their size, and the runtime maps them from its own file once.
mlir::LogicalResult appendWeightsPayload(mlir::MLIRContext *context,
                                         llvm::StringRef path,
                                         const ModelDescription &model);

} // namespace lmc

#endif // LMC_DRIVER_EMIT_H
