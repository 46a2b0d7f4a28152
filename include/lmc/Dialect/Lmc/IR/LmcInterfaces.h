//===- LmcInterfaces.h - autodiff and precision interfaces ------*- C++ -*-===//

#ifndef LMC_DIALECT_LMC_IR_LMCINTERFACES_H
#define LMC_DIALECT_LMC_IR_LMCINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "lmc/Dialect/Lmc/IR/LmcInterfaces.h.inc"

namespace lmc {
/// Verifies the element types of a two-operand product of the precision
/// policy (matmul, convolutions): operands alike and a result alike, or
/// bf16/f16 operands with an f32 result (lmc-mixed-precision).
mlir::LogicalResult verifyProductElementTypes(mlir::Operation *op);
} // namespace lmc

#endif // LMC_DIALECT_LMC_IR_LMCINTERFACES_H
