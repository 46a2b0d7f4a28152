//===- LmcEnums.h - lmc dialect enumerations --------------------*- C++ -*-===//
//
// The enumerations of LmcEnums.td (lmc.cmp's predicate, the precision of
// mixed-precision steps), with their names: stringifyEnum and
// symbolizeEnum<T>.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_DIALECT_LMC_IR_LMCENUMS_H
#define LMC_DIALECT_LMC_IR_LMCENUMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

#include "lmc/Dialect/Lmc/IR/LmcEnums.h.inc"

#endif // LMC_DIALECT_LMC_IR_LMCENUMS_H
