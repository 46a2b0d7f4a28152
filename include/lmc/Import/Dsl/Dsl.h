//===- Dsl.h - the lmc DSL front end ----------------------------*- C++ -*-===//
//
// Reads a model written in the lmc DSL (docs/dsl.md) and builds the same
// contract as the ONNX importer: `func.func @forward` whose arguments are
// tagged `lmc.param` (+ `lmc.init`) or `lmc.input` and whose results are
// tagged `lmc.output` (see lmc/Dialect/Lmc/IR/LmcAttributes.h). The file's
// `train` block becomes DslTrainSettings, the defaults of the compile
// (lmc::applyDslTrainDefaults in lmc/Driver/Pipelines.h).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_IMPORT_DSL_H
#define LMC_IMPORT_DSL_H

#include "lmc/Dialect/Lmc/IR/LmcEnums.h"
#include "lmc/runtime/optimizers.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lmc {


struct DslImportOptions {
  /// Size bound to the model's batch dimension; 0 = take `batch` from the
  /// train block (an error if a batch dimension is used and neither is set).
  int64_t batch = 0;
  /// Seed of the deterministic parameter initializers; nullopt = the train
  /// block's `seed`, else 0.
  std::optional<uint64_t> seed;
  /// Budget for the parameters: a model that needs more bytes is refused
  /// before its initial values are generated. 0 = no limit.
  uint64_t maxParamBytes = uint64_t(8) << 30;
};

/// What the `train` block sets; unset fields keep the driver's defaults.
struct DslTrainSettings {
  std::optional<int64_t> batch;
  std::optional<std::string> loss; // cross_entropy | mse | output:NAME
  std::optional<Optimizer> optimizer;
  std::optional<double> lr, momentum, beta1, beta2, eps, weightDecay;
  std::optional<double> clipGradNorm;
  std::optional<uint64_t> seed;
  std::optional<Precision> precision;
  /// `mesh = { data: D, model: M }` as --mesh takes it: "data=D,model=M".
  std::optional<std::string> mesh;
  /// `shard "GLOB" = [_, model]` as --shard takes it: "GLOB=_,model".
  std::vector<std::string> shard;
};

/// Imports a `.lmc` file. Errors are emitted as diagnostics on `context`
/// (several per run when the parser can recover) and yield a null module.
/// `settings`, when given, receives the train block.
mlir::OwningOpRef<mlir::ModuleOp>
importDslFile(mlir::MLIRContext &context, llvm::StringRef path,
              const DslImportOptions &options,
              DslTrainSettings *settings = nullptr);

/// Imports DSL source held in memory; `path` names it in diagnostics.
mlir::OwningOpRef<mlir::ModuleOp>
importDslBuffer(mlir::MLIRContext &context, llvm::StringRef source,
                llvm::StringRef path, const DslImportOptions &options,
                DslTrainSettings *settings = nullptr);

} // namespace lmc

#endif // LMC_IMPORT_DSL_H
