//===- FuzzContext.h - the MLIR context of the importer fuzz targets ------===//
#ifndef LMC_TEST_FUZZ_FUZZCONTEXT_H
#define LMC_TEST_FUZZ_FUZZCONTEXT_H

#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace lmc::fuzz {

/// A single-threaded context for one input. Attributes are uniqued in the
/// context and live as long as it: a fresh one every 500 inputs keeps long
/// runs within the RSS limit.
inline mlir::MLIRContext &context() {
  static std::unique_ptr<mlir::MLIRContext> current;
  static unsigned runs = 0;
  if (!current || ++runs % 500 == 0)
    current = std::make_unique<mlir::MLIRContext>(
        mlir::MLIRContext::Threading::DISABLED);
  return *current;
}

} // namespace lmc::fuzz

#endif // LMC_TEST_FUZZ_FUZZCONTEXT_H
