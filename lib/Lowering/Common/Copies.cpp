//===- Copies.cpp - memref.copy as linalg.copy ----------------------------===//

#include "Copies.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

void lmc::copiesToLinalg(RewriterBase &rewriter, Operation *root,
                         function_ref<bool(memref::CopyOp)> select) {
  SmallVector<memref::CopyOp> copies;
  root->walk([&](memref::CopyOp copy) {
    if (select(copy))
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    rewriter.eraseOp(copy);
  }
}
