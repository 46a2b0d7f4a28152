//===- ReshapeSharding.cpp - ShardingInterface for tensor reshapes --------===//
//
// MLIR 22 implements no ShardingInterface for tensor.collapse_shape and
// tensor.expand_shape, which lmc's batched matmuls ([b, t, d] -> [b*t, d])
// and attention heads use. Modeled here as loops over the expanded
// tensor's dimensions: the expanded tensor is indexed by all of them, the
// collapsed one by the leading dimension of each reassociation group. A
// split of a collapsed dimension is then a split of its group's leading
// expanded dimension: both hold the same contiguous slices. Splits of
// other dimensions of a merged group have no such reading and are dropped
// (the partitioner gathers them before the reshape).
//
//===----------------------------------------------------------------------===//

#include "lmc/Transforms/ReshapeSharding.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::shard;

namespace lmc {
namespace {

template <typename ReshapeOp>
struct ReshapeShardingModel
    : public ShardingInterface::ExternalModel<ReshapeShardingModel<ReshapeOp>,
                                              ReshapeOp> {
  static constexpr bool kCollapses =
      std::is_same_v<ReshapeOp, tensor::CollapseShapeOp>;

  static RankedTensorType expandedType(ReshapeOp op) {
    return kCollapses ? op.getSrcType() : op.getResultType();
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(
        expandedType(cast<ReshapeOp>(op)).getRank(),
        utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto reshape = cast<ReshapeOp>(op);
    MLIRContext *context = op->getContext();
    int64_t loops = expandedType(reshape).getRank();
    AffineMap expanded = AffineMap::getMultiDimIdentityMap(loops, context);
    SmallVector<AffineExpr> leading;
    for (const ReassociationIndices &group :
         reshape.getReassociationIndices())
      leading.push_back(getAffineDimExpr(group.front(), context));
    AffineMap collapsed = AffineMap::get(loops, 0, leading, context);
    return kCollapses ? SmallVector<AffineMap>{expanded, collapsed}
                      : SmallVector<AffineMap>{collapsed, expanded};
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    FailureOr<ShardingOption> option = shard::detail::defaultGetShardingOption(
        op, operandShardings, resultShardings);
    if (failed(option) || option->empty)
      return option;
    for (const ReassociationIndices &group :
         cast<ReshapeOp>(op).getReassociationIndices())
      for (int64_t dim : ArrayRef<int64_t>(group).drop_front())
        option->shardingArray[dim].clear();
    return option;
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto reshape = cast<ReshapeOp>(op);
    auto resultType = cast<RankedTensorType>(reshape.getType());
    if (resultShardings[0]) {
      GridOp grid = getGrid(op, resultShardings[0].getGridAttr(), symbolTable);
      resultType = cast<RankedTensorType>(
          shardShapedType(resultType, grid, resultShardings[0]));
    }
    Value local = ReshapeOp::create(builder, op->getLoc(), resultType,
                                    partitionedOperands[0],
                                    reshape.getReassociationIndices());
    partitionMap.map(op->getResult(0), local);
    partitionMap.map(op, local.getDefiningOp());
    return success();
  }
};

} // namespace

void registerReshapeShardingModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::CollapseShapeOp::attachInterface<
        ReshapeShardingModel<tensor::CollapseShapeOp>>(*context);
    tensor::ExpandShapeOp::attachInterface<
        ReshapeShardingModel<tensor::ExpandShapeOp>>(*context);
  });
}

} // namespace lmc
