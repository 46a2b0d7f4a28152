//===- driver.h - main() of a training executable ------------------------===//
#ifndef LMC_RUNTIME_DRIVER_H
#define LMC_RUNTIME_DRIVER_H

#include "model/compiled_model.h"

namespace lmc::rt {

/// Runs the training executable. Never throws: errors are printed as one
/// "error: ..." line on stderr. Returns 0 on success, 1 on a runtime error,
/// 2 on a usage error.
int runTrainingMain(int argc, char **argv, const CompiledModel &model);

} // namespace lmc::rt

#endif // LMC_RUNTIME_DRIVER_H
