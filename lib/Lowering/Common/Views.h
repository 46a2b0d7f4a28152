//===- Views.h - The buffer a memref views ----------------------*- C++ -*-===//
//
// Shared by the passes that ask whether two memrefs can be the same memory
// (lmc-linalg-to-gpu-loops, lmc-hoist-invariant-loads).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_COMMON_VIEWS_H
#define LMC_LIB_LOWERING_COMMON_VIEWS_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace lmc {

/// The buffer `memref` is a view of, through any chain of views (itself
/// when it is none).
inline mlir::Value rootBuffer(mlir::Value memref) {
  while (auto view = memref.getDefiningOp<mlir::ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

} // namespace lmc

#endif // LMC_LIB_LOWERING_COMMON_VIEWS_H
