//===- Train.h - the train block of the lmc DSL -----------------*- C++ -*-===//

#ifndef LMC_LIB_IMPORT_DSLTRAIN_H
#define LMC_LIB_IMPORT_DSLTRAIN_H

#include "Ast.h"

#include "lmc/Import/Dsl/Dsl.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace lmc::dsl {

/// Reads the program's train block into `settings`; `schedule` receives the
/// schedule dictionary (null when the block sets none). Reports every
/// invalid setting.
mlir::LogicalResult readTrainBlock(mlir::MLIRContext *context,
                                   const Program &program,
                                   DslTrainSettings &settings,
                                   mlir::DictionaryAttr &schedule);

} // namespace lmc::dsl

#endif // LMC_LIB_IMPORT_DSLTRAIN_H
