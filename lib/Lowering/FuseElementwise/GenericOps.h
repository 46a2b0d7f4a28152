//===- GenericOps.h - what the fusion steps ask of a generic ----*- C++ -*-===//
//
// Shared by DuplicateProducers.cpp and SideBySide.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_FUSEELEMENTWISE_GENERICOPS_H
#define LMC_LIB_LOWERING_FUSEELEMENTWISE_GENERICOPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace lmc {

/// The ops of `op`'s body, its yield included.
inline unsigned bodySize(mlir::linalg::GenericOp op) {
  return op.getRegion().front().getOperations().size();
}

/// A generic on tensors whose loops are all parallel.
inline bool isParallelOnTensors(mlir::linalg::GenericOp op) {
  return op.hasPureTensorSemantics() &&
         op.getNumParallelLoops() == op.getNumLoops();
}

} // namespace lmc

#endif // LMC_LIB_LOWERING_FUSEELEMENTWISE_GENERICOPS_H
