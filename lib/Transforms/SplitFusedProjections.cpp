//===- SplitFusedProjections.cpp - a fused projection as one per piece ----===//
//
// GPT-2's attention computes q, k and v with one projection whose output
// is sliced in three (`c_attn`). Splitting that weight over processes
// cuts its rows in contiguous blocks, which is not a split over heads, and
// the slices of a split tensor cannot be partitioned. When the user splits
// such a weight (`--shard`), this pass, on the forward function before
// autodiff, makes each piece a parameter of its own (`<name>#<i>`) and
// computes each slice from its pieces; the runtime joins the pieces back
// into `<name>` for files (the module's `lmc.pieces`). See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ShardRules.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace lmc {
#define GEN_PASS_DEF_LMCSPLITFUSEDPROJECTIONS
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Slices that cut `source` along one axis into `pieces` equal contiguous
/// blocks, each read whole.
struct PieceSlices {
  Value source;
  int64_t axis = -1, pieces = 0, size = 0; // size: of one piece
  SmallVector<SliceOp> slices;
};

/// The slices of `source` when all its users are such slices.
std::optional<PieceSlices> pieceSlices(Value source) {
  auto type = cast<RankedTensorType>(source.getType());
  PieceSlices found{source};
  llvm::SmallDenseSet<int64_t> starts;
  for (Operation *user : source.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice ||
        llvm::any_of(slice.getStride(), [](int64_t s) { return s != 1; }))
      return std::nullopt;
    ArrayRef<int64_t> shape = slice.getType().getShape();
    int64_t cut = 0; // dimensions this slice does not read whole
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (shape[d] == type.getDimSize(d) && slice.getStart()[d] == 0)
        continue;
      ++cut;
      if (found.axis != -1 && found.axis != d)
        return std::nullopt;
      if (found.size && found.size != shape[d])
        return std::nullopt;
      found.axis = d;
      found.size = shape[d];
      if (slice.getStart()[d] % shape[d] != 0)
        return std::nullopt;
      starts.insert(slice.getStart()[d]);
    }
    if (cut != 1)
      return std::nullopt;
    found.slices.push_back(slice);
  }
  if (found.axis == -1)
    return std::nullopt;
  found.pieces = type.getDimSize(found.axis) / found.size;
  if (found.pieces < 2 || type.getDimSize(found.axis) % found.size != 0 ||
      int64_t(starts.size()) != found.pieces)
    return std::nullopt;
  return found;
}

/// The ops between parameters and a sliced value along the sliced axis:
/// adds, broadcasts, reshapes and transposes that keep the axis whole, and
/// matmuls whose output columns (or rows) it is.
struct Tree {
  llvm::MapVector<Value, int64_t> axes; // traced values → their axis
  SmallVector<BlockArgument> leaves;    // parameters, along dimension 0
};

/// The axis of `source` that a reshape to `result` keeps as `axis`, if any:
/// equal sizes with equal products before.
std::optional<int64_t> reshapeSourceAxis(RankedTensorType source,
                                         RankedTensorType result,
                                         int64_t axis) {
  int64_t before = 1;
  for (int64_t d = 0; d < axis; ++d)
    before *= result.getDimSize(d);
  int64_t product = 1;
  for (int64_t d = 0; d < source.getRank(); ++d) {
    if (product == before && source.getDimSize(d) == result.getDimSize(axis))
      return d;
    product *= source.getDimSize(d);
  }
  return std::nullopt;
}

bool trace(Value value, int64_t axis, Tree &tree) {
  if (auto known = tree.axes.find(value); known != tree.axes.end())
    return known->second == axis;
  tree.axes[value] = axis;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func || axis != 0 ||
        !func.getArgAttr(arg.getArgNumber(), attrs::kParam))
      return false;
    tree.leaves.push_back(arg);
    return true;
  }
  Operation *op = value.getDefiningOp();
  if (auto add = dyn_cast<AddOp>(op))
    return trace(add.getLhs(), axis, tree) && trace(add.getRhs(), axis, tree);
  if (auto broadcast = dyn_cast<BroadcastInDimOp>(op)) {
    auto operandType = cast<RankedTensorType>(broadcast.getOperand().getType());
    for (auto [d, resultDim] : llvm::enumerate(broadcast.getDims()))
      if (resultDim == axis && operandType.getDimSize(d) != 1)
        return trace(broadcast.getOperand(), d, tree);
    return true; // constant along the axis: the operand stays
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    std::optional<int64_t> from = reshapeSourceAxis(
        cast<RankedTensorType>(reshape.getOperand().getType()),
        reshape.getType(), axis);
    return from && trace(reshape.getOperand(), *from, tree);
  }
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return trace(transpose.getOperand(), transpose.getPerm()[axis], tree);
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    int64_t rank = matmul.getType().getRank();
    if (axis == rank - 1)
      return trace(matmul.getRhs(),
                   matmul.getTransposeRhs() ? rank - 2 : rank - 1, tree);
    if (axis == rank - 2)
      return trace(matmul.getLhs(),
                   matmul.getTransposeLhs() ? rank - 1 : rank - 2, tree);
  }
  return false;
}

/// Whether the tree's values are read only by tree ops and `slices`: the
/// whole tree then dies once the slices read the pieces.
bool isSelfContained(const Tree &tree, ArrayRef<SliceOp> slices) {
  for (auto &[value, axis] : tree.axes)
    for (Operation *user : value.getUsers()) {
      bool inTree = llvm::any_of(user->getResults(), [&](Value result) {
        return tree.axes.contains(result);
      });
      if (!inTree && !llvm::is_contained(slices, user))
        return false;
    }
  return true;
}

/// `type` with dimension `axis` of `size`.
RankedTensorType resized(Type type, int64_t axis, int64_t size) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[axis] = size;
  return ranked.clone(shape);
}

/// Piece `index` of a parameter's initial value (split along dimension 0).
Attribute initPiece(Attribute init, RankedTensorType pieceType, int64_t index) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(init);
  if (!dense)
    return init;
  if (dense.isSplat())
    return dense.resizeSplat(pieceType);
  ArrayRef<char> raw = dense.getRawData();
  size_t bytes =
      raw.size() / (dense.getType().getDimSize(0) / pieceType.getDimSize(0));
  return DenseElementsAttr::getFromRawBuffer(
      pieceType, raw.slice(size_t(index) * bytes, bytes));
}

class Splitter {
public:
  Splitter(func::FuncOp func, const PieceSlices &slices, Tree tree)
      : func_(func), slices_(slices), tree_(std::move(tree)) {}

  /// Adds the pieces' arguments, reads each slice from its pieces, and
  /// removes the tree and the fused parameters. Records each fused
  /// parameter's pieces, in order, in `pieceNames`.
  void run(NamedAttrList &pieceNames) {
    MLIRContext *context = func_.getContext();
    for (BlockArgument leaf : tree_.leaves) {
      unsigned index = leaf.getArgNumber();
      auto name = func_.getArgAttrOfType<StringAttr>(index, attrs::kParam);
      NamedAttrList attrs(func_.getArgAttrDict(index));
      Attribute init = attrs.get(attrs::kInit);
      RankedTensorType type =
          resized(leaf.getType(), 0,
                  cast<RankedTensorType>(leaf.getType()).getDimSize(0) /
                      slices_.pieces);
      SmallVector<Attribute> names;
      for (int64_t i = 0; i < slices_.pieces; ++i) {
        std::string piece = (name.getValue() + "#" + Twine(i)).str();
        names.push_back(StringAttr::get(context, piece));
        attrs.set(attrs::kParam, StringAttr::get(context, piece));
        if (init)
          attrs.set(attrs::kInit, initPiece(init, type, i));
        unsigned at = func_.getNumArguments();
        (void)func_.insertArgument(at, type, attrs.getDictionary(context),
                                   leaf.getLoc());
        pieces_[{Value(leaf), i}] = func_.getArgument(at);
      }
      pieceNames.set(name, ArrayAttr::get(context, names));
    }
    // Right after the fused value: every piece's operands are defined
    // there, and every slice comes later.
    OpBuilder b(context);
    b.setInsertionPointAfterValue(slices_.source);
    for (SliceOp slice : slices_.slices) {
      int64_t index = slice.getStart()[slices_.axis] / slices_.size;
      slice.replaceAllUsesWith(rebuild(b, slices_.source, index));
      slice.erase();
    }
    // The tree in reverse definition order: users before their operands.
    SmallVector<Operation *> dead;
    for (auto &[value, axis] : tree_.axes)
      if (Operation *op = value.getDefiningOp())
        dead.push_back(op);
    llvm::sort(
        dead, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
    for (Operation *op : dead)
      op->erase();
    llvm::BitVector fused(func_.getNumArguments());
    for (BlockArgument leaf : tree_.leaves)
      fused.set(leaf.getArgNumber());
    (void)func_.eraseArguments(fused);
  }

private:
  /// `value` computed for piece `index` of the sliced axis.
  Value rebuild(OpBuilder &b, Value value, int64_t index) {
    auto axis = tree_.axes.find(value);
    if (axis == tree_.axes.end())
      return value; // not along the axis: shared by every piece
    if (auto arg = dyn_cast<BlockArgument>(value))
      return pieces_.at({value, index});
    auto key = std::make_pair(value, index);
    if (auto done = rebuilt_.find(key); done != rebuilt_.end())
      return done->second;
    Operation *op = value.getDefiningOp();
    IRMapping mapping;
    for (Value operand : op->getOperands())
      mapping.map(operand, rebuild(b, operand, index));
    Operation *piece = b.clone(*op, mapping);
    piece->getResult(0).setType(
        resized(value.getType(), axis->second, slices_.size));
    rebuilt_[key] = piece->getResult(0);
    return piece->getResult(0);
  }

  func::FuncOp func_;
  const PieceSlices &slices_;
  Tree tree_;
  llvm::DenseMap<std::pair<Value, int64_t>, Value> pieces_;
  llvm::DenseMap<std::pair<Value, int64_t>, Value> rebuilt_;
};

struct SplitFusedProjectionsPass
    : impl::LmcSplitFusedProjectionsBase<SplitFusedProjectionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string message;
    llvm::raw_string_ostream error(message);
    FailureOr<SmallVector<ShardRule>> rules = parseShardRules(shard, error);
    if (failed(rules)) {
      emitError(module.getLoc(), message);
      return signalPassFailure();
    }
    NamedAttrList pieceNames;
    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<PieceSlices> candidates;
      llvm::SetVector<Value> sources;
      func.walk([&](SliceOp slice) { sources.insert(slice.getOperand()); });
      for (Value source : sources)
        if (std::optional<PieceSlices> found = pieceSlices(source))
          candidates.push_back(std::move(*found));
      for (PieceSlices &candidate : candidates) {
        Tree tree;
        if (!trace(candidate.source, candidate.axis, tree) ||
            !isSelfContained(tree, candidate.slices) ||
            !llvm::any_of(tree.leaves, [&](BlockArgument leaf) {
              return splitsFirstDimension(*rules, func, leaf);
            }))
          continue;
        Splitter(func, candidate, std::move(tree)).run(pieceNames);
      }
    }
    if (!pieceNames.empty())
      module->setAttr(attrs::kPieces,
                      pieceNames.getDictionary(module.getContext()));
  }

  /// Whether a user's rule splits `leaf`'s dimension 0 over `model`.
  static bool splitsFirstDimension(ArrayRef<ShardRule> rules, func::FuncOp func,
                                   BlockArgument leaf) {
    auto name =
        func.getArgAttrOfType<StringAttr>(leaf.getArgNumber(), attrs::kParam);
    const ShardRule *rule = llvm::find_if(
        rules, [&](const ShardRule &r) { return r.glob.match(name); });
    return rule != rules.end() && !rule->splitOverModel.empty() &&
           rule->splitOverModel[0];
  }
};

} // namespace
} // namespace lmc
