//===- Reach.cpp - the ops that reach a buffer ----------------------------===//

#include "Reach.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace lmc {

Operation *lastReachingOp(Block &body, Value buffer, Operation *ignored) {
  Operation *last = nullptr;
  SmallVector<Value> worklist = {buffer};
  DenseSet<Value> seen = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == ignored)
        continue;
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && (!last || last->isBeforeInBlock(top)))
        last = top;
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return last;
}

} // namespace lmc
