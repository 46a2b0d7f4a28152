//===- LoweringUtils.cpp - linalg building blocks for lmc lowering --------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace lmc::lowering {

Value buildEmpty(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                  TypedAttr value) {
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar},
                                ValueRange{buildEmpty(b, loc, type)})
      .getResult(0);
}

Value buildFloat(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

namespace {
/// Lets a sum reduction's running addition be reassociated (`acc + x` with
/// fastmath `reassoc`): LLVM then vectorizes the reduction loop, keeping a
/// partial sum per vector lane as PyTorch's and BLAS's reductions do. The
/// result's last bits depend on the vector width, not on the run.
void allowReassociation(Value yielded, Value accumulator) {
  auto add = yielded.getDefiningOp<arith::AddFOp>();
  if (add && llvm::is_contained(add->getOperands(), accumulator))
    add.setFastmath(arith::FastMathFlags::reassoc);
}
} // namespace

Value buildGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                   Value init, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                   AffineMap resultMap, ArrayRef<utils::IteratorType> iterators,
                   BodyBuilder body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(resultMap);
  bool reduces = llvm::is_contained(iterators, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args);
        if (reduces)
          allowReassociation(result, args.back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyBuilder body) {
  unsigned rank = resultType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> inputMaps(inputs.size(), identity);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return buildGeneric(b, loc, resultType, buildEmpty(b, loc, resultType),
                      inputs, inputMaps, identity, iterators, body);
}

Value buildStaticReshape(OpBuilder &b, Location loc, Value value,
                         RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type == resultType)
    return value;
  auto allInOneGroup = [](int64_t rank) {
    SmallVector<ReassociationIndices> groups;
    if (rank > 0)
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return groups;
  };
  // Collapse to rank 1 (or 0 for a one-element result), then expand.
  int64_t flatRank = resultType.getRank() == 0 ? 0 : 1;
  Value flat = value;
  if (type.getRank() != flatRank) {
    auto flatType = RankedTensorType::get(
        flatRank ? SmallVector<int64_t>{type.getNumElements()}
                 : SmallVector<int64_t>{},
        type.getElementType());
    if (type.getRank() == 0)
      flat = tensor::ExpandShapeOp::create(b, loc, flatType, value,
                                           SmallVector<ReassociationIndices>{});
    else
      // A one-element tensor collapses to rank 0 with no groups at all.
      flat = tensor::CollapseShapeOp::create(
          b, loc, flatType, value,
          flatRank ? allInOneGroup(type.getRank())
                   : SmallVector<ReassociationIndices>{});
  }
  if (resultType.getRank() == flatRank)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, resultType, flat,
                                       allInOneGroup(resultType.getRank()));
}

Value buildReduceAlong(
    OpBuilder &b, Location loc, Value value, int64_t axis, TypedAttr initValue,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(value.getType());
  unsigned rank = type.getRank();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> resultExprs;
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < rank; ++d) {
    bool reduced = static_cast<int64_t>(d) == axis;
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced) {
      shape.push_back(type.getDimSize(d));
      resultExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  AffineMap resultMap = AffineMap::get(rank, 0, resultExprs, b.getContext());
  return buildGeneric(b, loc, resultType,
                      buildFilled(b, loc, resultType, initValue), value,
                      b.getMultiDimIdentityMap(rank), resultMap, iterators,
                      [&](OpBuilder &nb, Location nl, ValueRange args) {
                        return combine(nb, nl, args[0], args[1]);
                      });
}

} // namespace lmc::lowering
