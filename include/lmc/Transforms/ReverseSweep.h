//===- ReverseSweep.h - reverse-mode differentiation of a list of ops -*- C++ -*-===//
//
// The core of lmc-autodiff, also used by the ONNX importer for the
// ai.onnx.preview.training Gradient op: activity analysis over a list of
// ops, then a reverse sweep that builds each op's VJP
// (DifferentiableOpInterface) and sums fan-in (docs/design.md §3).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_TRANSFORMS_REVERSESWEEP_H
#define LMC_TRANSFORMS_REVERSESWEEP_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace lmc {

/// Whether `value` is a tensor of floats: the values that can carry a
/// cotangent.
bool isFloatTensor(mlir::Value value);

/// The float values among `ops` (in program order) that depend on one of
/// `sources` and that `target` depends on: the values that carry
/// cotangents. Sources that are not float tensors carry none.
llvm::DenseSet<mlir::Value>
findActiveValues(llvm::ArrayRef<mlir::Operation *> ops,
                 llvm::ArrayRef<mlir::Value> sources, mlir::Value target);

class ReverseSweep {
public:
  explicit ReverseSweep(const llvm::DenseSet<mlir::Value> &active)
      : active(active) {}

  /// Builds at `b`'s insertion point (after `ops`) the cotangent of every
  /// active value, walking `ops` backwards from `target`'s cotangent
  /// `seed`. Fails, with an error at the op, on an active op without a VJP.
  mlir::LogicalResult run(llvm::ArrayRef<mlir::Operation *> ops,
                          mlir::Value target, mlir::Value seed,
                          mlir::OpBuilder &b);

  /// The cotangent of `v`, or null when no active path reaches it.
  mlir::Value cotangentOf(mlir::Value v) const {
    return cotangents.lookup(v);
  }

private:
  mlir::LogicalResult visit(mlir::Operation &op, mlir::OpBuilder &b);

  const llvm::DenseSet<mlir::Value> &active;
  llvm::DenseMap<mlir::Value, mlir::Value> cotangents;
};

} // namespace lmc

#endif // LMC_TRANSFORMS_REVERSESWEEP_H
