//===- FuseLayerNorm.cpp - layer normalizations as lmc.layer_norm ---------===//
//
// An ONNX LayerNormalization over the last axis is imported as two row
// sums, a square root, a division and four elementwise ops with their
// broadcasts (lib/Import/Onnx/Normalization.cpp); lowered one by one they
// are six loop nests forward and, differentiated, seven backward, each a
// pass over the whole activation and an OpenMP region of its own.
// lmc.layer_norm is the same function, computed by the runtime a row at a
// time (runtime/kernels/layer_norm.cpp), its gradient the closed form in
// one pass (lmc.layer_norm_grad).
//
//===----------------------------------------------------------------------===//

#include "lmc/Transforms/Passes.h"

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace lmc {
#define GEN_PASS_DEF_LMCFUSELAYERNORM
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The f32 value of a splat constant.
std::optional<float> splatValue(Value value) {
  DenseElementsAttr constant;
  if (!matchPattern(value, m_Constant(&constant)) || !constant.isSplat() ||
      !constant.getElementType().isF32())
    return std::nullopt;
  return constant.getSplatValue<APFloat>().convertToFloat();
}

/// The importer's decomposition, matched from its last op back to the
/// input; every op of it (`ops`, consumers first) read only inside it.
struct LayerNormChain {
  Value x, scale, bias;
  float epsilon = 0;
  AddOp result;
  SmallVector<Operation *> ops;

  /// `value`'s defining op when it is an OpT read by nothing but
  /// `uses` uses (all inside the chain), recorded in `ops`.
  template <typename OpT> OpT inner(Value value, unsigned uses = 1) {
    auto op = value.getDefiningOp<OpT>();
    if (!op || !llvm::hasNItems(value.getUses(), uses))
      return nullptr;
    ops.push_back(op);
    return op;
  }

  /// The [.., 1] value `value` spreads over the rows (a broadcast_in_dim
  /// with identity dims).
  Value rowBroadcastOf(Value value) {
    auto broadcast = inner<BroadcastInDimOp>(value);
    if (!broadcast)
      return {};
    for (auto [i, d] : llvm::enumerate(broadcast.getDims()))
      if (d != int64_t(i))
        return {};
    return broadcast.getOperand();
  }

  /// The [C] parameter `value` broadcasts along the last dimension.
  Value parameterOf(Value value, int64_t rank, int64_t C) {
    auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
    if (!broadcast || !broadcast->hasOneUse() ||
        broadcast.getDims() != ArrayRef<int64_t>{rank - 1} ||
        cast<RankedTensorType>(broadcast.getOperand().getType()).getShape() !=
            ArrayRef<int64_t>{C})
      return {};
    ops.push_back(broadcast);
    return broadcast.getOperand();
  }

  /// The operand of `mean` = reduce_sum(operand over the last axis, kept)
  /// * (1 / C).
  Value meanOperand(Value mean, int64_t rank, int64_t C) {
    auto scaled = inner<MulOp>(mean);
    if (!scaled || splatValue(scaled.getRhs()) != float(1.0 / double(C)))
      return {};
    auto sum = inner<ReduceSumOp>(scaled.getLhs());
    if (!sum || !sum.getKeepDims() ||
        sum.getAxes() != ArrayRef<int64_t>{rank - 1})
      return {};
    return sum.getOperand();
  }
};

/// y = ((x - mean) * (1 / sqrt(var + eps))) * scale + bias, matched from
/// the add; f32, static shapes, normalized over the last dimension.
std::optional<LayerNormChain> matchChain(AddOp add) {
  auto type = cast<RankedTensorType>(add.getType());
  if (!type.hasStaticShape() || !type.getElementType().isF32() ||
      type.getRank() < 1)
    return std::nullopt;
  const int64_t rank = type.getRank(), C = type.getShape().back();
  LayerNormChain chain;
  chain.result = add;
  auto scaled = chain.inner<MulOp>(add.getLhs());
  if (!scaled || !(chain.bias = chain.parameterOf(add.getRhs(), rank, C)))
    return std::nullopt;
  auto normalized = chain.inner<MulOp>(scaled.getLhs());
  if (!normalized ||
      !(chain.scale = chain.parameterOf(scaled.getRhs(), rank, C)))
    return std::nullopt;
  // centered is read twice by its square and once by the normalization.
  auto centered = chain.inner<SubOp>(normalized.getLhs(), 3);
  Value inverse = chain.rowBroadcastOf(normalized.getRhs());
  if (!centered || !inverse)
    return std::nullopt;
  auto divide = chain.inner<DivOp>(inverse);
  if (!divide || splatValue(divide.getLhs()) != 1.0f)
    return std::nullopt;
  auto root = chain.inner<SqrtOp>(divide.getRhs());
  if (!root)
    return std::nullopt;
  auto shifted = chain.inner<AddOp>(root.getOperand());
  std::optional<float> epsilon =
      shifted ? splatValue(shifted.getRhs()) : std::nullopt;
  if (!epsilon)
    return std::nullopt;
  chain.epsilon = *epsilon;
  Value squares = chain.meanOperand(shifted.getLhs(), rank, C);
  auto square = squares ? chain.inner<MulOp>(squares) : nullptr;
  if (!square || square.getLhs() != centered.getResult() ||
      square.getRhs() != centered.getResult())
    return std::nullopt;
  Value mean = chain.rowBroadcastOf(centered.getRhs());
  if (!mean)
    return std::nullopt;
  chain.x = centered.getLhs();
  if (chain.meanOperand(mean, rank, C) != chain.x)
    return std::nullopt;
  return chain;
}

/// Fuses `chain`; returns the lmc.layer_norm's result, which replaces the
/// chain's.
Value fuse(LayerNormChain &chain) {
  OpBuilder b(chain.result);
  auto type = cast<RankedTensorType>(chain.result.getType());
  SmallVector<int64_t> statsShape(type.getShape().drop_back());
  statsShape.push_back(2);
  auto norm = LayerNormOp::create(
      b, chain.result.getLoc(), type,
      RankedTensorType::get(statsShape, type.getElementType()), chain.x,
      chain.scale, chain.bias, b.getF32FloatAttr(chain.epsilon));
  chain.result.getResult().replaceAllUsesWith(norm.getY());
  // The chain, consumers first, then the constants only it read.
  llvm::SetVector<Operation *> constants;
  chain.ops.insert(chain.ops.begin(), chain.result);
  for (Operation *op : chain.ops) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp<arith::ConstantOp>())
        constants.insert(def);
    op->dropAllUses();
  }
  for (Operation *op : chain.ops)
    op->erase();
  for (Operation *constant : constants)
    if (constant->use_empty())
      constant->erase();
  return norm.getY();
}

struct FuseLayerNormPass
    : public impl::LmcFuseLayerNormBase<FuseLayerNormPass> {
  void runOnOperation() override {
    SmallVector<LayerNormChain> chains;
    getOperation().walk([&](AddOp add) {
      if (std::optional<LayerNormChain> chain = matchChain(add))
        chains.push_back(*chain);
    });
    // A chain may normalize an earlier one's result (two layer norms in a
    // row, as Swin's blocks have): that value is replaced when the earlier
    // chain is fused, and the later chain must read the replacement.
    DenseMap<Value, Value> replaced;
    for (LayerNormChain &chain : chains) {
      for (Value *input : {&chain.x, &chain.scale, &chain.bias})
        if (Value replacement = replaced.lookup(*input))
          *input = replacement;
      Value old = chain.result.getResult();
      replaced[old] = fuse(chain);
    }
  }
};

} // namespace
} // namespace lmc
