//===- ReshapeSharding.h - ShardingInterface for tensor reshapes -*- C++ -*-===//

#ifndef LMC_TRANSFORMS_RESHAPESHARDING_H
#define LMC_TRANSFORMS_RESHAPESHARDING_H

#include "mlir/IR/DialectRegistry.h"

namespace lmc {

/// Attaches lmc's ShardingInterface models to tensor.collapse_shape and
/// tensor.expand_shape (MLIR 22 has none).
void registerReshapeShardingModels(mlir::DialectRegistry &registry);

} // namespace lmc

#endif // LMC_TRANSFORMS_RESHAPESHARDING_H
