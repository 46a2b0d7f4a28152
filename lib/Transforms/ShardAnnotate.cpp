//===- ShardAnnotate.cpp - The user's mesh and shardings ------------------===//
//
// lmc shards on the linalg form: upstream implements ShardingInterface for
// linalg structured ops, tensor.empty and arith constants, nearly all a
// lowered training step contains (ReshapeSharding.cpp adds the reshapes),
// so `sharding-propagation` and `shard-partition` do the work. This pass
// states what the user chose, after rewriting the two forms upstream
// cannot shard and unsharing tensors computed from scalars;
// ShardComplete.cpp fills the gaps propagation leaves.
//
// The compiled step is SPMD over the `model` axis only: data parallelism
// stays the runtime's outer loop (one bucketed all-reduce of the gradients
// per step, gradient accumulation), which partitioning the batch inside the
// step would duplicate.
//
//===----------------------------------------------------------------------===//

#include "ShardRules.h"
#include "lmc/Transforms/Mesh.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

namespace lmc {
#define GEN_PASS_DEF_LMCSHARDANNOTATE
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The grid's one axis: `model`.
constexpr shard::GridAxis kModelAxis = 0;

/// A tensor's split: per dimension, the grid axes it is split over.
using Split = SmallVector<shard::GridAxesAttr>;

/// The split of a `<role> <name>` entry-point argument or result, by the
/// parameter it belongs to: a parameter, its gradient, or its optimizer
/// state `<param>.<slot>` (shaped like it; scalar slots stay replicated).
std::optional<std::string> paramOf(StringRef name,
                                   std::optional<attrs::Role> role) {
  if (role == attrs::Role::Param || role == attrs::Role::Grad)
    return name.str();
  if (role == attrs::Role::State && name.contains('.'))
    return name.rsplit('.').first.str();
  return std::nullopt;
}

class ShardAnnotator {
public:
  using PipelineRunner =
      llvm::function_ref<LogicalResult(OpPassManager &, Operation *)>;

  /// `runPipeline`: the pass's own (a nested pipeline inside a pass).
  ShardAnnotator(ModuleOp module, Mesh mesh, MutableArrayRef<ShardRule> rules,
                 PipelineRunner runPipeline)
      : module_(module), mesh_(mesh), rules_(rules),
        runPipeline_(runPipeline), builder_(module.getContext()) {}

  LogicalResult run() {
    MLIRContext *context = module_.getContext();
    module_->setAttr(attrs::kMesh,
                     DictionaryAttr::get(
                         context, {builder_.getNamedAttr(
                                       "data", builder_.getI64IntegerAttr(
                                                   mesh_.data)),
                                   builder_.getNamedAttr(
                                       "model", builder_.getI64IntegerAttr(
                                                    mesh_.model))}));
    if (failed(splitsFromRules()))
      return failure();
    for (ShardRule &rule : rules_)
      if (!rule.used)
        return emitError(module_.getLoc())
               << "--shard '" << rule.text << "' matches no parameter";
    if (mesh_.model == 1)
      return success(); // nothing to partition
    builder_.setInsertionPointToStart(module_.getBody());
    shard::GridOp::create(builder_, module_.getLoc(), attrs::kShardGrid,
                          ArrayRef<int64_t>{mesh_.model});
    if (failed(splitsFromPropagation()))
      return failure();
    recordSplits();
    for (auto func : module_.getOps<func::FuncOp>())
      if (!func.isExternal())
        annotate(func);
    return success();
  }

private:
  /// Every parameter a rule matches, checked against its shape.
  LogicalResult splitsFromRules() {
    for (auto func : module_.getOps<func::FuncOp>()) {
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto [name, role] = nameAndRole(func.getArgAttrDict(i));
        auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
        if (role != attrs::Role::Param || !type || splits_.count(name))
          continue;
        // A piece of a fused parameter (lmc-split-fused-projections)
        // follows the rule of the parameter it was cut from.
        StringRef param = name;
        if (auto fused =
                module_->getAttrOfType<DictionaryAttr>(attrs::kPieces))
          for (NamedAttribute whole : fused)
            if (llvm::is_contained(cast<ArrayAttr>(whole.getValue())
                                       .getAsValueRange<StringAttr>(),
                                   name))
              param = whole.getName().getValue();
        ShardRule *rule = llvm::find_if(
            rules_, [&](ShardRule &r) { return r.glob.match(param); });
        if (rule == rules_.end())
          continue;
        rule->used = true;
        if (rule->splitOverModel.size() != size_t(type.getRank()))
          return emitError(func.getArgument(i).getLoc())
                 << "--shard '" << rule->text << "' gives "
                 << rule->splitOverModel.size()
                 << " dimensions for parameter '" << name << "' of rank "
                 << type.getRank();
        Split split;
        for (auto [dim, isSplit] : llvm::enumerate(rule->splitOverModel)) {
          if (isSplit && type.getDimSize(dim) % mesh_.model != 0)
            return emitError(func.getArgument(i).getLoc())
                   << "parameter '" << name << "': dimension " << dim
                   << " of size " << type.getDimSize(dim)
                   << " does not divide over model=" << mesh_.model;
          split.push_back(builder_.getDenseI16ArrayAttr(
              isSplit ? ArrayRef<shard::GridAxis>{kModelAxis}
                     : ArrayRef<shard::GridAxis>{}));
        }
        splits_[name] = split;
      }
    }
    return success();
  }

  /// For the runtime: which dimension of each parameter is split.
  void recordSplits() {
    SmallVector<NamedAttribute> splits;
    for (const auto &[name, split] : splits_)
      for (auto [dim, axes] : llvm::enumerate(split))
        if (!axes.empty())
          splits.push_back(builder_.getNamedAttr(
              name, builder_.getI64IntegerAttr(int64_t(dim))));
    module_->setAttr(attrs::kSplits,
                     builder_.getDictionaryAttr(splits));
  }

  /// The parameters no rule names take the sharding propagation gives them
  /// in train_step (a column-parallel layer's bias follows its weight), so
  /// that every entry point, and a step's input and output, agree on it.
  LogicalResult splitsFromPropagation() {
    auto train = module_.lookupSymbol<func::FuncOp>("train_step");
    if (!train)
      return success();
    OpBuilder b(train);
    auto probe = cast<func::FuncOp>(b.clone(*train));
    probe.setName("lmc_shard_probe");
    annotate(probe);
    OpPassManager pm(func::FuncOp::getOperationName());
    shard::ShardingPropagationOptions options;
    options.traversal = shard::TraversalOrder::ForwardBackward;
    pm.addPass(shard::createShardingPropagation(options));
    if (failed(runPipeline_(pm, probe)))
      return failure();
    for (BlockArgument arg : probe.getArguments()) {
      auto [name, role] = nameAndRole(probe.getArgAttrDict(arg.getArgNumber()));
      if (role != attrs::Role::Param || splits_.count(name))
        continue;
      for (Operation *user : arg.getUsers())
        if (auto annotation = dyn_cast<shard::ShardOp>(user)) {
          auto sharding =
              annotation.getSharding().getDefiningOp<shard::ShardingOp>();
          splits_[name] = Split(sharding.getSplitAxes().getAxes());
          break;
        }
    }
    probe.erase();
    return success();
  }

  std::pair<std::string, std::optional<attrs::Role>>
  nameAndRole(DictionaryAttr attributes) {
    auto name =
        attributes ? attributes.getAs<StringAttr>(attrs::kName) : StringAttr();
    std::optional<attrs::Role> role = attrs::roleIn(attributes);
    if (!name || !role)
      return {};
    return {name.str(), role};
  }

  /// The split of an entry-point argument or result, if it has one.
  std::optional<Split> splitOf(DictionaryAttr attrs, Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    auto [name, role] = nameAndRole(attrs);
    if (!tensor || tensor.getRank() == 0)
      return std::nullopt;
    // Model outputs (eval_step's logits) leave whole: the runtime computes
    // accuracy on them.
    if (role == attrs::Role::Output)
      return Split(tensor.getRank(), builder_.getDenseI16ArrayAttr({}));
    std::optional<std::string> param = paramOf(name, role);
    if (!param)
      return std::nullopt;
    auto it = splits_.find(*param);
    if (it == splits_.end() || it->second.size() != size_t(tensor.getRank()))
      return std::nullopt;
    return it->second;
  }

  Value annotation(OpBuilder &b, Location loc, Value value, const Split &split) {
    Value sharding = shard::ShardingOp::create(b, loc, attrs::kShardGrid, split);
    return shard::ShardOp::create(b, loc, value, sharding,
                                  /*annotate_for_users=*/true);
  }

  void annotate(func::FuncOp func) {
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    for (BlockArgument arg : func.getArguments()) {
      std::optional<Split> split =
          splitOf(func.getArgAttrDict(arg.getArgNumber()), arg.getType());
      if (!split)
        continue;
      Value annotated = annotation(b, arg.getLoc(), arg, *split);
      arg.replaceAllUsesExcept(annotated, annotated.getDefiningOp());
    }
    func.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        std::optional<Split> split = splitOf(
            func.getResultAttrDict(operand.getOperandNumber()),
            operand.get().getType());
        if (split)
          operand.set(annotation(b, ret.getLoc(), operand.get(), *split));
      }
    });
  }

  ModuleOp module_;
  Mesh mesh_;
  MutableArrayRef<ShardRule> rules_;
  PipelineRunner runPipeline_;
  OpBuilder builder_;
  llvm::StringMap<Split> splits_;
};

/// Upstream's linalg ShardingInterface rejects indexing maps with constant
/// results, which lmc's lowering uses for size-1 dimensions (keep-dims
/// reductions write [b, t, 1] through (d0, d1, d2) -> (d0, d1, 0), and
/// broadcasts read it so). Each such 0 becomes a loop of its own, of extent
/// 1: parallel where an output reads it, a one-iteration reduction
/// otherwise (the body ignores the accumulator then, as before).
void giveUnitDimensionsLoops(ModuleOp module) {
  SmallVector<linalg::GenericOp> generics;
  module.walk([&](linalg::GenericOp op) {
    for (AffineMap map : op.getIndexingMapsArray())
      if (llvm::any_of(map.getResults(), [](AffineExpr e) {
            return isa<AffineConstantExpr>(e);
          })) {
        generics.push_back(op);
        return;
      }
  });
  for (linalg::GenericOp op : generics) {
    MLIRContext *context = op.getContext();
    unsigned loops = op.getNumLoops();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    const unsigned firstInit = op.getNumDpsInputs();
    SmallVector<SmallVector<AffineExpr>> results(maps.size());
    SmallVector<bool> readByOutput;
    for (auto [k, map] : llvm::enumerate(maps))
      for (AffineExpr e : map.getResults()) {
        if (!isa<AffineConstantExpr>(e)) {
          results[k].push_back(e);
          continue;
        }
        results[k].push_back(getAffineDimExpr(loops + readByOutput.size(),
                                              context));
        readByOutput.push_back(k >= firstInit);
      }
    const unsigned newLoops = loops + readByOutput.size();
    SmallVector<AffineMap> newMaps;
    for (const SmallVector<AffineExpr> &exprs : results)
      newMaps.push_back(AffineMap::get(newLoops, 0, exprs, context));
    for (bool parallel : readByOutput)
      iterators.push_back(parallel ? utils::IteratorType::parallel
                                   : utils::IteratorType::reduction);
    OpBuilder b(op);
    auto replacement = linalg::GenericOp::create(
        b, op.getLoc(), op.getResultTypes(), op.getDpsInputs(),
        op.getDpsInits(), newMaps, iterators);
    replacement.getRegion().takeBody(op.getRegion());
    op.replaceAllUsesWith(replacement.getResults());
    op.erase();
  }
}

/// Upstream partitions `arith.constant` only when it is a splat. Any other
/// tensor constant (a position table, an index list) becomes a
/// linalg.generic that reads it element by element from inside its body,
/// where partitioning copies it unchanged; the generic reads its iteration
/// index, so lmc-shard-complete keeps it replicated.
void wrapNonSplatConstants(ModuleOp module) {
  SmallVector<arith::ConstantOp> constants;
  module.walk([&](arith::ConstantOp op) {
    auto value = dyn_cast<DenseElementsAttr>(op.getValue());
    if (value && !value.isSplat() && isa<func::FuncOp>(op->getParentOp()))
      constants.push_back(op);
  });
  for (arith::ConstantOp op : constants) {
    auto type = cast<RankedTensorType>(op.getType());
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                          type.getElementType());
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{}, ValueRange{empty},
        ArrayRef<AffineMap>{
            b.getMultiDimIdentityMap(unsigned(type.getRank()))},
        SmallVector<utils::IteratorType>(type.getRank(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &nested, Location nestedLoc, ValueRange) {
          Value table = arith::ConstantOp::create(nested, nestedLoc, type,
                                                  op.getValue());
          SmallVector<Value> indices;
          for (int64_t d = 0; d < type.getRank(); ++d)
            indices.push_back(linalg::IndexOp::create(nested, nestedLoc, d));
          Value element =
              tensor::ExtractOp::create(nested, nestedLoc, table, indices);
          linalg::YieldOp::create(nested, nestedLoc, element);
        });
    op.replaceAllUsesWith(generic.getResult(0));
    op.erase();
  }
}

/// Whether `op` computes a tensor from scalars only: a splat constant, or an
/// all-parallel generic into a fresh tensor whose inputs are rank-0 tensors
/// or tensors in `fromScalars` (AdamW's 1 - lr * weight_decay, broadcast
/// and computed elementwise). As cheap to recompute as to reshard.
bool computesFromScalars(Operation *op,
                         const llvm::DenseSet<Value> &fromScalars) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto value = dyn_cast<SplatElementsAttr>(constant.getValue());
    return value && value.getType().getRank() > 0;
  }
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic->getNumResults() == 1 &&
         generic.getNumDpsInits() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops() &&
         generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() &&
         llvm::all_of(generic.getDpsInputs(), [&](Value input) {
           auto type = dyn_cast<RankedTensorType>(input.getType());
           return type && (type.getRank() == 0 || fromScalars.contains(input));
         });
}

/// CSE shares tensors computed from scalars (Adam's betas, the clipping
/// factor, the weight decay) between parameters of one shape; split
/// differently (attention's q and its output projection), the shared value
/// would be resharded for all but one, with an all-to-all. Each user gets
/// a copy of its own, consumers before producers so that a copy's own
/// operands are copied in turn; CSE merges the copies that end up alike
/// after partitioning.
void unshareScalarTensors(ModuleOp module) {
  llvm::DenseSet<Value> fromScalars;
  SmallVector<Operation *> producers;
  module.walk([&](Operation *op) {
    if (!computesFromScalars(op, fromScalars))
      return;
    fromScalars.insert(op->getResult(0));
    producers.push_back(op);
  });
  for (Operation *op : llvm::reverse(producers)) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : llvm::drop_begin(op->getResult(0).getUses()))
      uses.push_back(&use);
    for (OpOperand *use : uses) {
      OpBuilder b(op);
      IRMapping mapping;
      if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
        Value init = generic.getDpsInits()[0];
        mapping.map(init, b.clone(*init.getDefiningOp())->getResult(0));
      }
      use->set(b.clone(*op, mapping)->getResult(0));
    }
  }
}

struct ShardAnnotatePass : impl::LmcShardAnnotateBase<ShardAnnotatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mesh.empty()) {
      if (!shard.empty()) {
        emitError(module.getLoc())
            << "--shard needs a --mesh with the axes it names";
        return signalPassFailure();
      }
      return;
    }
    std::string message;
    llvm::raw_string_ostream error(message);
    auto fail = [&] {
      emitError(module.getLoc(), message);
      signalPassFailure();
    };
    FailureOr<Mesh> parsed = parseMesh(mesh, error);
    if (failed(parsed))
      return fail();
    FailureOr<SmallVector<ShardRule>> rules = parseShardRules(shard, error);
    if (failed(rules))
      return fail();
    giveUnitDimensionsLoops(module);
    wrapNonSplatConstants(module);
    unshareScalarTensors(module);
    auto run = [&](OpPassManager &pm, Operation *op) {
      return runPipeline(pm, op);
    };
    if (failed(ShardAnnotator(module, *parsed, *rules, run).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace lmc
