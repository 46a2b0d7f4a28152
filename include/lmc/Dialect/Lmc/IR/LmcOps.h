//===- LmcOps.h - lmc ops ---------------------------------------*- C++ -*-===//

#ifndef LMC_DIALECT_LMC_IR_LMCOPS_H
#define LMC_DIALECT_LMC_IR_LMCOPS_H

#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Dialect/Lmc/IR/LmcEnums.h"
#include "lmc/Dialect/Lmc/IR/LmcInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "lmc/Dialect/Lmc/IR/LmcOps.h.inc"

namespace lmc {
/// The type of an lmc op's operand or result: every one is a ranked tensor.
inline mlir::RankedTensorType tensorType(mlir::Value value) {
  return mlir::cast<mlir::RankedTensorType>(value.getType());
}

/// lmc.cmp on two scalars, as it lowers for floats: NaN compares false
/// except with `ne` (C++'s operators are the same: ordered, != unordered).
bool compareScalars(CmpPredicate predicate, double lhs, double rhs);
} // namespace lmc

#endif // LMC_DIALECT_LMC_IR_LMCOPS_H
