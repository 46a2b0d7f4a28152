//===- LmcDialect.cpp - the lmc dialect -----------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace lmc;

#include "lmc/Dialect/Lmc/IR/LmcOpsDialect.cpp.inc"
#include "lmc/Dialect/Lmc/IR/LmcInterfaces.cpp.inc"

namespace {
/// lmc ops are pure tensor computations: inlining them is always legal. The
/// optimizer pass relies on this to fold @forward_grad into @train_step.
struct LmcInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *, Region *, bool,
                       IRMapping &) const final {
    return true;
  }
};
} // namespace

void LmcDialect::initialize() {
  addInterfaces<LmcInlinerInterface>();
  addOperations<
#define GET_OP_LIST
#include "lmc/Dialect/Lmc/IR/LmcOps.cpp.inc"
      >();
}
