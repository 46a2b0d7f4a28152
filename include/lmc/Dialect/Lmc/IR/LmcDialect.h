//===- LmcDialect.h - the lmc dialect ---------------------------*- C++ -*-===//

#ifndef LMC_DIALECT_LMC_IR_LMCDIALECT_H
#define LMC_DIALECT_LMC_IR_LMCDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "lmc/Dialect/Lmc/IR/LmcOpsDialect.h.inc"

#endif // LMC_DIALECT_LMC_IR_LMCDIALECT_H
