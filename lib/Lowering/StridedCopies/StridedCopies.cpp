//===- StridedCopies.cpp - strided memref.copy as linalg.copy -------------===//
//
// Bufferization copies a concat's pieces into strided slices of the result
// with memref.copy. LLVM lowering turns a contiguous copy into memcpy but a
// strided one into a call to MLIR's C runner library (`memrefCopy`), which
// an lmc executable does not link; as linalg.copy it becomes loops like
// every other linalg op.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/Copies.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace lmc {
#define GEN_PASS_DEF_LMCSTRIDEDCOPIESTOLINALG
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace {

bool isContiguous(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  return type && memref::isStaticShapeAndContiguousRowMajor(type);
}

struct StridedCopiesToLinalgPass
    : public lmc::impl::LmcStridedCopiesToLinalgBase<
          StridedCopiesToLinalgPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    lmc::copiesToLinalg(rewriter, getOperation(), [](memref::CopyOp copy) {
      return !isContiguous(copy.getSource()) || !isContiguous(copy.getTarget());
    });
  }
};

} // namespace
