//===- FrozenParameters.h - the user's --freeze / --train -------*- C++ -*-===//
//
// Which parameters stay constant during training, read by lmc-autodiff
// (which folds them into constants) and lmc-fuse-attention (which runs
// before it and may rely on their values, such as an exported mask's
// scalars).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_TRANSFORMS_FROZENPARAMETERS_H
#define LMC_TRANSFORMS_FROZENPARAMETERS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Regex.h"

#include <optional>

namespace lmc {

/// Which parameters the user keeps constant (--freeze / --train): a regex
/// must match the whole name; a piece of a fused parameter
/// (lmc-split-fused-projections) goes with the fused parameter's name.
class FrozenParameters {
public:
  /// The regexes of `freeze` and `train` (either may be empty) and the
  /// fused parameters recorded on `op` (the module); an error on `op` for a
  /// malformed regex.
  static mlir::FailureOr<FrozenParameters>
  create(mlir::Operation *op, llvm::StringRef freeze, llvm::StringRef train);

  bool isFrozen(llvm::StringRef name) const;

  /// The initial value (lmc.init) of `value` when it is a frozen parameter
  /// argument of its function, which training never changes; null
  /// otherwise, and for a parameter tagged lmc.frozen (lmc-lora's base:
  /// the executable holds it as a tensor, its value known at run time).
  mlir::ElementsAttr frozenValue(mlir::Value value) const;

private:
  std::optional<llvm::Regex> freeze, train;
  llvm::StringMap<llvm::StringRef> fusedNames; // piece -> fused parameter
};

} // namespace lmc

#endif // LMC_TRANSFORMS_FROZENPARAMETERS_H
