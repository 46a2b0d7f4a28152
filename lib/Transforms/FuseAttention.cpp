//===- FuseAttention.cpp - masked attention chains as lmc.attention -------===//
//
// An exported GPT computes attention as five ops: the scores q kt, a scale,
// the mask (select of -inf), a softmax over the keys and the product with
// v. Lowered one by one, every (batch, head) pair writes and reads its
// [T, S] scores and probabilities several times, and a causal mask hides
// half of what the products compute. lmc.attention is the same function
// computed by the runtime in blocks of queries over the keys each block
// can see (runtime/kernels/attention.cpp); its gradient recomputes the
// probabilities from the rows' statistics, or, with `keep-exponentials`,
// reads the exponentials the forward kept (a [T, S] matrix per pair, as the
// unfused graph keeps its probabilities: on the benchmark GPT a fifth of
// the gradient's products and all its exponentials saved, 2.7 -> 2.0 ms
// per layer on one thread).
//
// PyTorch's dynamo exporter writes scaled_dot_product_attention with an
// additive mask (0 where visible, float32's lowest where hidden) and a
// guard zeroing NaN probabilities; with a constant mask that hides no
// whole row (and finite scores) both are the same function as the select
// of -inf, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "FrozenParameters.h"

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

/// The f32 scalar `value` is spread from when training cannot change it: a
/// splat constant or a frozen parameter's splat initial value, possibly
/// broadcast.
std::optional<float> knownScalar(Value value, const FrozenParameters &frozen) {
  auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
  if (broadcast)
    value = broadcast.getOperand();
  auto constant =
      dyn_cast_or_null<DenseElementsAttr>(frozen.frozenValue(value));
  if (!constant && !matchPattern(value, m_Constant(&constant)))
    return std::nullopt;
  if (!constant.isSplat() || !constant.getElementType().isF32())
    return std::nullopt;
  return constant.getSplatValue<APFloat>().convertToFloat();
}

/// A score plus `shift` has an exponential of exactly 0 after the row's
/// maximum is subtracted (for any score below 1e29 in magnitude): -inf,
/// and float32's lowest, which exporters write instead.
bool hides(float shift) { return shift <= -1e30f; }

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

/// `value` without broadcasts that keep its rank and dimension order (from
/// [B, 1, T, S] to [B, H, T, T], say).
Value peelSameRankBroadcasts(Value value) {
  while (auto broadcast = value.getDefiningOp<BroadcastInDimOp>()) {
    auto from = cast<RankedTensorType>(broadcast.getOperand().getType());
    if (from.getRank() != cast<RankedTensorType>(value.getType()).getRank() ||
        !llvm::equal(broadcast.getDims(),
                     llvm::seq<int64_t>(0, from.getRank())))
      break;
    value = broadcast.getOperand();
  }
  return value;
}

/// The positions an additive mask `addend` hides from `scores` (true:
/// hidden), as a constant [1.., T, S]: `addend` is a constant, or a select
/// between two known scalars on a constant condition, holding 0 or a
/// hiding value (`hides`) everywhere, the same for every batch and head,
/// and leaving every row at least one key.
DenseElementsAttr additiveMask(Value addend, RankedTensorType scores,
                               const FrozenParameters &frozen) {
  addend = peelSameRankBroadcasts(addend);
  auto type = cast<RankedTensorType>(addend.getType());
  if (type.getRank() != scores.getRank() || !type.hasStaticShape() ||
      type.getShape().take_back(2) != scores.getShape().take_back(2))
    return {};
  SmallVector<bool> hidden;
  auto classify = [](float shift) -> std::optional<bool> {
    if (hides(shift))
      return true;
    if (shift == 0.0f)
      return false;
    return std::nullopt;
  };
  DenseElementsAttr values;
  if (matchPattern(addend, m_Constant(&values))) {
    if (!values.getElementType().isF32())
      return {};
    for (APFloat v : values.getValues<APFloat>()) {
      std::optional<bool> h = classify(v.convertToFloat());
      if (!h)
        return {};
      hidden.push_back(*h);
    }
  } else if (auto select = addend.getDefiningOp<SelectOp>()) {
    std::optional<float> onTrue = knownScalar(select.getOnTrue(), frozen);
    std::optional<float> onFalse = knownScalar(select.getOnFalse(), frozen);
    if (!onTrue || !onFalse || !classify(*onTrue) || !classify(*onFalse))
      return {};
    DenseElementsAttr condition;
    if (!matchPattern(peelSameRankBroadcasts(select.getCondition()),
                      m_Constant(&condition)) ||
        condition.getType() != type.clone(condition.getElementType()))
      return {};
    for (bool c : condition.getValues<bool>())
      hidden.push_back(*classify(c ? *onTrue : *onFalse));
  } else {
    return {};
  }
  // One [T, S] slice, every leading slice equal to it, no row all hidden.
  int64_t t = type.getDimSize(type.getRank() - 2);
  int64_t s = type.getDimSize(type.getRank() - 1);
  ArrayRef<bool> slice = ArrayRef(hidden).take_front(t * s);
  for (size_t start = 0; start < hidden.size(); start += t * s)
    if (ArrayRef(hidden).slice(start, t * s) != slice)
      return {};
  for (int64_t row = 0; row < t; ++row)
    if (llvm::all_of(slice.slice(row * s, s), [](bool h) { return h; }))
      return {};
  SmallVector<int64_t> shape(type.getRank() - 2, 1);
  shape.append({t, s});
  return DenseElementsAttr::get(
      RankedTensorType::get(shape, IntegerType::get(type.getContext(), 1)),
      slice);
}

/// out = matmul(softmax(select(mask, -inf, scale * matmul(q, kt))), v),
/// each intermediate read by the next op only; or the exporter's form,
/// matmul(guard(softmax(scale * matmul(q, kt) + M)), v).
struct AttentionChain {
  MatmulOp scores;
  MulOp scaled;    // null: no scale
  SelectOp masked; // null: an additive mask
  AddOp shifted;   // the additive mask's addition, or null
  SoftmaxOp softmax;
  CmpOp nanCheck; // select(p != p, 0, p) after the softmax, or null
  SelectOp nanGuard;
  MatmulOp product;
  Value mask; // true where masked (the select's condition or its negation)
  DenseElementsAttr constantMask; // an additive mask's hidden positions
  bool keepWhereTrue = false;
  float scale = 1.0f;
};

/// `guard` is select(p != p, 0, p), what reads p only besides `product`'s
/// use of the guard's result.
bool matchNanGuard(SelectOp guard, AttentionChain &chain,
                   const FrozenParameters &frozen) {
  auto check = guard.getCondition().getDefiningOp<CmpOp>();
  Value probs = guard.getOnFalse();
  std::optional<float> zero = knownScalar(guard.getOnTrue(), frozen);
  if (!check || check.getPredicate() != CmpPredicate::ne || check.getLhs() != probs ||
      check.getRhs() != probs || !zero || *zero != 0.0f ||
      !guard.getResult().hasOneUse() || !check.getResult().hasOneUse() ||
      !llvm::all_of(probs.getUsers(), [&](Operation *user) {
        return user == check || user == guard;
      }))
    return false;
  chain.nanCheck = check;
  chain.nanGuard = guard;
  return true;
}

std::optional<AttentionChain> matchChain(MatmulOp product,
                                         const FrozenParameters &frozen) {
  AttentionChain chain;
  chain.product = product;
  if (product.getTransposeLhs() || product.getTransposeRhs())
    return std::nullopt;
  Value probs = product.getLhs();
  if (auto guard = probs.getDefiningOp<SelectOp>();
      guard && matchNanGuard(guard, chain, frozen))
    probs = guard.getOnFalse();
  chain.softmax = probs.getDefiningOp<SoftmaxOp>();
  if (!chain.softmax ||
      (!chain.nanGuard && !chain.softmax.getResult().hasOneUse()))
    return std::nullopt;
  auto type = cast<RankedTensorType>(chain.softmax.getType());
  if (!type.getElementType().isF32() || !type.hasStaticShape() ||
      type.getRank() < 2 || chain.softmax.getAxis() != type.getRank() - 1)
    return std::nullopt;
  Value scores;
  if ((chain.shifted = chain.softmax.getOperand().getDefiningOp<AddOp>())) {
    if (!chain.shifted.getResult().hasOneUse())
      return std::nullopt;
    for (auto [addend, shifted] :
         {std::pair(chain.shifted.getRhs(), chain.shifted.getLhs()),
          std::pair(chain.shifted.getLhs(), chain.shifted.getRhs())})
      if ((chain.constantMask = additiveMask(addend, type, frozen))) {
        scores = shifted;
        break;
      }
    if (!chain.constantMask || !scores.hasOneUse())
      return std::nullopt;
  } else {
    // Without the additive mask's guarantee of a visible key per row, the
    // guard would turn a fully masked row's NaNs into zeros.
    if (chain.nanGuard)
      return std::nullopt;
    chain.masked = chain.softmax.getOperand().getDefiningOp<SelectOp>();
    if (!chain.masked || !chain.masked.getResult().hasOneUse())
      return std::nullopt;
    auto isNegInf = [&](Value v) {
      std::optional<float> c = knownScalar(v, frozen);
      return c && std::isinf(*c) && *c < 0;
    };
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
  }
  if ((chain.scaled = scores.getDefiningOp<MulOp>())) {
    std::optional<float> scale = knownScalar(chain.scaled.getRhs(), frozen);
    Value product = chain.scaled.getLhs();
    if (!scale) {
      scale = knownScalar(chain.scaled.getLhs(), frozen);
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
  for (Value operand :
       {chain.scores.getLhs(), chain.scores.getRhs(), product.getRhs()}) {
    auto operandType = cast<RankedTensorType>(operand.getType());
    if (!operandType.hasStaticShape() || !operandType.getElementType().isF32())
      return std::nullopt;
  }
  return chain;
}

void fuse(AttentionChain &chain, bool keepExponentials) {
  OpBuilder b(chain.product);
  Location loc = chain.product.getLoc();
  Value mask = chain.mask;
  if (chain.constantMask)
    mask = arith::ConstantOp::create(b, loc, chain.constantMask);
  else if (chain.keepWhereTrue)
    mask = NotOp::create(b, loc, mask.getType(), mask);
  auto outType = cast<RankedTensorType>(chain.product.getType());
  SmallVector<int64_t> statsShape(outType.getShape().drop_back());
  statsShape.push_back(2);
  auto statsType = RankedTensorType::get(statsShape, outType.getElementType());
  Type expsType;
  if (keepExponentials)
    expsType = chain.softmax.getType();
  auto attention = AttentionOp::create(
      b, loc, outType, statsType, expsType, chain.scores.getLhs(),
      chain.scores.getRhs(), chain.product.getRhs(), mask,
      b.getF32FloatAttr(chain.scale));
  chain.product.getResult().replaceAllUsesWith(attention.getOut());
  // The chain, each op before what it reads, then what only it read (the
  // broadcasts of -inf, the scale and the mask, their constants).
  SmallVector<Operation *> chainOps{chain.product};
  if (chain.nanGuard)
    chainOps.append({chain.nanGuard, chain.nanCheck});
  chainOps.push_back(chain.softmax);
  chainOps.push_back(chain.masked ? chain.masked.getOperation()
                                  : chain.shifted.getOperation());
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

struct FuseAttentionPass
    : public impl::LmcFuseAttentionBase<FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<FrozenParameters> frozen =
        FrozenParameters::create(getOperation(), freeze, train);
    if (failed(frozen))
      return signalPassFailure();
    SmallVector<AttentionChain> chains;
    getOperation().walk([&](MatmulOp product) {
      if (std::optional<AttentionChain> chain = matchChain(product, *frozen))
        chains.push_back(*chain);
    });
    for (AttentionChain &chain : chains)
      fuse(chain, keepExponentials);
  }
};

} // namespace
} // namespace lmc
