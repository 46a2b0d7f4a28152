//===- LmcInterfaces.h - autodiff and precision interfaces ------*- C++ -*-===//

#ifndef LMC_DIALECT_LMC_IR_LMCINTERFACES_H
#define LMC_DIALECT_LMC_IR_LMCINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "lmc/Dialect/Lmc/IR/LmcInterfaces.h.inc"

#endif // LMC_DIALECT_LMC_IR_LMCINTERFACES_H
