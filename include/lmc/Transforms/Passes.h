//===- Passes.h - lmc training passes ---------------------------*- C++ -*-===//

#ifndef LMC_TRANSFORMS_PASSES_H
#define LMC_TRANSFORMS_PASSES_H

#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Dialect/Lmc/IR/LmcEnums.h"
#include "lmc/Support/EnumChoices.h"
#include "lmc/runtime/optimizers.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace lmc {

/// A lmc-rematerialize policy (`lmc --remat` less `none`): per-block,
/// per-block:N (the first N segments whole, the others selectively) or
/// selective.
struct RematPolicy {
  bool perBlock = false;
  /// With perBlock: how many leading segments are recomputed whole; -1 all.
  int64_t wholeSegments = -1;
};
/// The policy `text` spells, or nothing when it spells none of them.
std::optional<RematPolicy> parseRematPolicy(llvm::StringRef text);

#define GEN_PASS_DECL
#include "lmc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lmc/Transforms/Passes.h.inc"

} // namespace lmc

#endif // LMC_TRANSFORMS_PASSES_H
