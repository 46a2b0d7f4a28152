//===- Reach.h - the ops that reach a buffer -----------------------*- C++
//-*-===//
//
// Shared by the passes that need to know when a buffer is last touched
// (lmc-mark-gradients-ready, lmc-plan-buffers).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_COMMON_REACH_H
#define LMC_LIB_LOWERING_COMMON_REACH_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"

namespace lmc {

/// The last op of `body` (a top-level op: the loop nest around a use) that
/// reaches `buffer`: uses it, or uses a value computed from it (a view, a
/// pointer handed to a runtime call, a value loaded from it); null when none
/// does. Uses by `ignored` (a dealloc of the buffer) do not count.
mlir::Operation *lastReachingOp(mlir::Block &body, mlir::Value buffer,
                                mlir::Operation *ignored = nullptr);

} // namespace lmc

#endif // LMC_LIB_LOWERING_COMMON_REACH_H
