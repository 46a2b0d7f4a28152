//===- ShardRules.h - the user's --shard rules ------------------*- C++ -*-===//
//
// `--shard GLOB=AXES` rules, read by lmc-split-fused-projections (before
// autodiff) and lmc-shard-annotate (on the linalg form).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_TRANSFORMS_SHARDRULES_H
#define LMC_TRANSFORMS_SHARDRULES_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace lmc {

/// A `--shard GLOB=AXES` rule: per tensor dimension, whether it is split
/// over `model` (the only axis parameters are split over).
struct ShardRule {
  std::string text;
  llvm::GlobPattern glob;
  llvm::SmallVector<bool> splitOverModel;
  bool used = false;
};

/// The rules of `spec` (separated by ';'); failure with a message on
/// `error`.
mlir::FailureOr<llvm::SmallVector<ShardRule>>
parseShardRules(llvm::StringRef spec, llvm::raw_ostream &error);

} // namespace lmc

#endif // LMC_TRANSFORMS_SHARDRULES_H
