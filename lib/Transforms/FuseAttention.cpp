//===- FuseAttention.cpp - masked attention chains as lmc.attention -------===//
//
// An exported GPT computes attention as five ops: the scores q kt, a scale,
// the mask (select of -inf), a softmax over the keys and the product with
// v. Lowered one by one, every (batch, head) pair writes and reads its
// [T, S] scores and probabilities several times, and a causal mask hides
// half of what the products compute. lmc.attention is the same function
// computed by the runtime in blocks of queries over the keys each block
// can see (runtime/kernels/attention.cpp); its gradient recomputes the
// probabilities from the rows' statistics instead of keeping them.
//
//===----------------------------------------------------------------------===//

#include "lmc/Transforms/Passes.h"

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>
#include <optional>

namespace lmc {
#define GEN_PASS_DEF_LMCFUSEATTENTION
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The scalar `value` is spread from: a broadcast of a rank-0 (or
/// splat) f32 constant.
std::optional<float> broadcastScalar(Value value) {
  auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
  if (broadcast)
    value = broadcast.getOperand();
  DenseElementsAttr constant;
  if (!matchPattern(value, m_Constant(&constant)) || !constant.isSplat() ||
      !constant.getElementType().isF32())
    return std::nullopt;
  return constant.getSplatValue<APFloat>().convertToFloat();
}

/// The [1.., T, S] mask a [batch.., T, S] condition is broadcast from.
Value broadcastMask(Value condition) {
  auto broadcast = condition.getDefiningOp<BroadcastInDimOp>();
  if (!broadcast)
    return {};
  auto from = cast<RankedTensorType>(broadcast.getOperand().getType());
  auto to = cast<RankedTensorType>(condition.getType());
  if (from.getRank() != to.getRank() ||
      from.getShape().take_back(2) != to.getShape().take_back(2) ||
      !llvm::all_of(from.getShape().drop_back(2),
                    [](int64_t d) { return d == 1; }))
    return {};
  for (auto [i, d] : llvm::enumerate(broadcast.getDims()))
    if (d != int64_t(i))
      return {};
  return broadcast.getOperand();
}

/// out = matmul(softmax(select(mask, -inf, scale * matmul(q, kt))), v),
/// each intermediate read by the next op only.
struct AttentionChain {
  MatmulOp scores;
  MulOp scaled; // null: no scale
  SelectOp masked;
  SoftmaxOp softmax;
  MatmulOp product;
  Value mask; // true where masked (the select's condition or its negation)
  bool keepWhereTrue = false;
  float scale = 1.0f;
};

std::optional<AttentionChain> matchChain(MatmulOp product) {
  AttentionChain chain;
  chain.product = product;
  if (product.getTransposeLhs() || product.getTransposeRhs())
    return std::nullopt;
  chain.softmax = product.getLhs().getDefiningOp<SoftmaxOp>();
  if (!chain.softmax || !chain.softmax.getResult().hasOneUse())
    return std::nullopt;
  auto type = cast<RankedTensorType>(chain.softmax.getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape() ||
      type.getRank() < 2 || chain.softmax.getAxis() != type.getRank() - 1)
    return std::nullopt;
  chain.masked = chain.softmax.getOperand().getDefiningOp<SelectOp>();
  if (!chain.masked || !chain.masked.getResult().hasOneUse())
    return std::nullopt;
  auto isNegInf = [](Value v) {
    std::optional<float> c = broadcastScalar(v);
    return c && std::isinf(*c) && *c < 0;
  };
  Value scores;
  if (isNegInf(chain.masked.getOnTrue())) {
    scores = chain.masked.getOnFalse();
  } else if (isNegInf(chain.masked.getOnFalse())) {
    scores = chain.masked.getOnTrue();
    chain.keepWhereTrue = true;
  } else {
    return std::nullopt;
  }
  chain.mask = broadcastMask(chain.masked.getCondition());
  if (!chain.mask || !scores.hasOneUse())
    return std::nullopt;
  if ((chain.scaled = scores.getDefiningOp<MulOp>())) {
    std::optional<float> scale = broadcastScalar(chain.scaled.getRhs());
    Value product = chain.scaled.getLhs();
    if (!scale) {
      scale = broadcastScalar(chain.scaled.getLhs());
      product = chain.scaled.getRhs();
    }
    if (!scale || !product.hasOneUse())
      return std::nullopt;
    chain.scale = *scale;
    scores = product;
  }
  chain.scores = scores.getDefiningOp<MatmulOp>();
  if (!chain.scores || chain.scores.getTransposeLhs() ||
      chain.scores.getTransposeRhs())
    return std::nullopt;
  // The runtime's kernel: static f32 operands.
  for (Value operand : {chain.scores.getLhs(), chain.scores.getRhs(),
                        product.getRhs()}) {
    auto operandType = cast<RankedTensorType>(operand.getType());
    if (!operandType.hasStaticShape() || !operandType.getElementType().isF32())
      return std::nullopt;
  }
  return chain;
}

void fuse(AttentionChain &chain) {
  OpBuilder b(chain.product);
  Location loc = chain.product.getLoc();
  Value mask = chain.mask;
  if (chain.keepWhereTrue)
    mask = NotOp::create(b, loc, mask.getType(), mask);
  auto outType = cast<RankedTensorType>(chain.product.getType());
  SmallVector<int64_t> statsShape(outType.getShape().drop_back());
  statsShape.push_back(2);
  auto statsType = RankedTensorType::get(statsShape, outType.getElementType());
  auto attention = AttentionOp::create(
      b, loc, outType, statsType, chain.scores.getLhs(),
      chain.scores.getRhs(), chain.product.getRhs(), mask,
      b.getF32FloatAttr(chain.scale));
  chain.product.getResult().replaceAllUsesWith(attention.getOut());
  // The chain, then what only it read (the broadcasts of -inf, the scale
  // and the mask, their constants).
  SmallVector<Operation *> chainOps{chain.product, chain.softmax,
                                    chain.masked};
  if (chain.scaled)
    chainOps.push_back(chain.scaled);
  chainOps.push_back(chain.scores);
  SmallVector<Operation *> feeders;
  for (Operation *op : chainOps) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !llvm::is_contained(chainOps, def))
        feeders.push_back(def);
    op->erase();
  }
  DenseSet<Operation *> erased;
  while (!feeders.empty()) {
    Operation *op = feeders.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        feeders.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

struct FuseAttention : public impl::LmcFuseAttentionBase<FuseAttention> {
  void runOnOperation() override {
    SmallVector<AttentionChain> chains;
    getOperation().walk([&](MatmulOp product) {
      if (std::optional<AttentionChain> chain = matchChain(product))
        chains.push_back(*chain);
    });
    for (AttentionChain &chain : chains)
      fuse(chain);
  }
};

} // namespace
} // namespace lmc
