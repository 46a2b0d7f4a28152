//===- ElementwiseInPlace.cpp - elementwise results over dead operands ----===//
//
// After lowering and fusion, every elementwise linalg.generic writes into
// an empty tensor: bufferized, a fresh buffer. When one of its inputs has
// the result's shape, is read element for element at the same place, and
// dies with the op (the GELU gradient's dy, a bias added to a product
// nothing else reads), the result can be written over that input. A fresh
// output costs a read of every line before it is written (the cache
// fetches a line it is about to overwrite) and a buffer live beside the
// input; written over the input, the loop streams one buffer less. The
// benchmark GPT's GELU gradient loop reads two [1024, 1024] tensors and
// writes a third: 64 MB of memory traffic a call with a fresh output, 48
// over its dead input.
//
// Only the destination changes: one-shot bufferization still decides
// whether writing in place is safe (a linalg op that reads and writes an
// operand element by element at the same index conflicts with nothing),
// and an input is only offered when writing over it cannot cost a copy:
// its buffer is one the step itself allocated (not an argument or a
// constant), through reshapes and destinations.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace lmc {
#define GEN_PASS_DEF_LMCELEMENTWISEINPLACE
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Whether `value`'s buffer is one the function allocates for itself:
/// followed through reshapes (each the only use of its source) and the
/// destinations of linalg ops down to an empty tensor. An argument, a
/// constant or anything else is not offered (bufferization would copy it
/// rather than write over it).
bool isOwnBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<tensor::EmptyOp>(def))
      return true;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      value = def->getOperand(0);
      if (!value.hasOneUse())
        return false;
      continue;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics())
      return false;
    value = linalgOp.getTiedOpOperand(cast<OpResult>(value))->get();
  }
  return false; // a block argument
}

/// Points each unread empty destination of an all-parallel generic at an
/// input of its type, read through the same identity map, that has no use
/// but this op and is the function's own buffer. Each input serves one
/// destination.
void writeOverDeadInputs(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() ||
      op.getNumLoops() != op.getNumParallelLoops())
    return;
  llvm::SmallPtrSet<OpOperand *, 4> taken;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!init.get().getDefiningOp<tensor::EmptyOp>() ||
        op.payloadUsesValueFromOperand(&init) ||
        !op.getMatchingIndexingMap(&init).isIdentity())
      continue;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value value = input->get();
      if (taken.contains(input) || value.getType() != init.get().getType() ||
          !op.getMatchingIndexingMap(input).isIdentity() ||
          !value.hasOneUse() || !isOwnBuffer(value))
        continue;
      init.set(value);
      taken.insert(input);
      break;
    }
  }
}

struct ElementwiseInPlacePass
    : public impl::LmcElementwiseInPlaceBase<ElementwiseInPlacePass> {
  void runOnOperation() override { getOperation()->walk(writeOverDeadInputs); }
};

} // namespace
} // namespace lmc
