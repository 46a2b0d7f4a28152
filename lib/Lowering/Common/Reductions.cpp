//===- Reductions.cpp - what splitting a reduction needs to know ----------===//

#include "Reductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace lmc {

FailureOr<SmallVector<Operation *>> outputCombiners(linalg::GenericOp op) {
  Block *body = op.getBody();
  SmallVector<BlockArgument> outs(
      body->getArguments().drop_front(op.getNumDpsInputs()));
  SmallVector<Operation *> combiners;
  for (unsigned i = 0; i < outs.size(); ++i) {
    SmallVector<Operation *> chain;
    if (!matchReduction(outs, i, chain) || chain.size() != 1 ||
        chain[0]->getNumOperands() != 2 || !arith::getNeutralElement(chain[0]))
      return failure();
    combiners.push_back(chain[0]);
  }
  return combiners;
}

int64_t largestDivisorAtMost(int64_t n, int64_t bound) {
  for (int64_t d = std::min(n, bound); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

} // namespace lmc
