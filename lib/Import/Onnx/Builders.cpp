//===- Builders.cpp - lmc IR pieces shared by the op importers ------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace lmc::onnx_import {

Value buildPermute(OpBuilder &b, Location loc, Value v,
                   ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return TransposeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, perm);
}

SmallVector<int64_t> axisLastPermutation(int64_t rank, int64_t axis) {
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  return perm;
}

Value buildIota(OpBuilder &b, Location loc, RankedTensorType type,
                int64_t axis, int64_t offset) {
  int64_t size = type.getDimSize(axis);
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[axis] = size;
  SmallVector<double> positions;
  for (int64_t i = 0; i < size; ++i)
    positions.push_back(double(i + offset));
  Value iota = arith::ConstantOp::create(
      b, loc,
      constantFromDoubles(RankedTensorType::get(shape, type.getElementType()),
                          positions));
  return buildNumpyBroadcast(b, loc, iota, type.getShape());
}

Value buildIndexHits(OpBuilder &b, Location loc, Value indices, int64_t axis) {
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t count = type.getDimSize(axis);
  return OrOp::create(
      b, loc, buildCompare(b, loc, CmpPredicate::eq, indices, buildIota(b, loc, type, axis)),
      buildCompare(b, loc, CmpPredicate::eq, indices,
                   buildIota(b, loc, type, axis, -count)));
}

} // namespace lmc::onnx_import
