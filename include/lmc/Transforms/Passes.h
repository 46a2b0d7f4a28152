//===- Passes.h - lmc training passes ---------------------------*- C++ -*-===//

#ifndef LMC_TRANSFORMS_PASSES_H
#define LMC_TRANSFORMS_PASSES_H

#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

namespace lmc {

#define GEN_PASS_DECL
#include "lmc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lmc/Transforms/Passes.h.inc"

} // namespace lmc

#endif // LMC_TRANSFORMS_PASSES_H
