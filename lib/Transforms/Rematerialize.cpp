//===- Rematerialize.cpp - activation checkpointing by recomputation ------===//
//
// The backward pass reads forward values (activations); kept from the
// forward pass to their use they are most of a step's memory. This pass
// keeps only checkpoints and recomputes the rest of a segment right before
// the backward pass needs it (jax.checkpoint, PyTorch's
// checkpoint_sequential, Megatron's selective recompute).
//
// The checkpoints are found from the graph, not from op names: a value is a
// cut when every path from the data (the inputs and the random key) to the
// loss goes through it. The cuts are the loss's dominators in the dataflow
// graph; in a transformer they are the residual stream between the
// attention and MLP halves of each block, in an MLP each layer's output.
// The values between two cuts form a segment; everything a segment
// computes depends on the data only through its cut.
//
// Cuts are taken on the paths from the model input with the most of them
// (labels join the data at the loss, where nothing dominates both); values
// that do not depend on that input (labels' one-hot, masks, dropout's random
// numbers) are kept, not recomputed.
//
// Policies: `per-block` recomputes every forward value the backward pass
// reads except the cuts; `selective` only those larger than their segment's
// cut (attention's [B, H, T, T] scores and probabilities), from the values
// they are computed from, which stay. Parameters and values that do not
// depend on the data (masks, position tables) are never recomputed.
//
// Recomputed ops read their segment's inputs through lmc.optimization_barrier,
// so CSE does not merge them back into the originals; each clone carries
// `lmc.recomputed` (model FLOPs leave them out). The recomputation is the
// same arithmetic on the same values: gradients are bit for bit those
// without it.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace lmc {
#define GEN_PASS_DEF_LMCREMATERIALIZE
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// The forward ops: those the loss or an updated model buffer depends on.
/// Everything else in @forward_grad is the backward pass.
DenseSet<Operation *> forwardOps(func::FuncOp func) {
  Operation *terminator = func.getBody().front().getTerminator();
  SmallVector<Value> worklist;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (i == 0 || func.getResultAttr(i, attrs::kBuffer))
      worklist.push_back(terminator->getOperand(i));
  DenseSet<Operation *> forward;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (op && forward.insert(op).second)
      llvm::append_range(worklist, op->getOperands());
  }
  return forward;
}

/// The dominator tree of the forward ops that depend on one model input,
/// rooted at a virtual source (null) that the input hangs from.
class DataDominators {
public:
  DataDominators(func::FuncOp func, const DenseSet<Operation *> &forward,
                 Value source) {
    sources.insert(source);
    depth[nullptr] = 0;
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (!forward.contains(&op))
        continue;
      std::optional<Operation *> dominator;
      for (Value operand : op.getOperands()) {
        std::optional<Operation *> pred = predecessor(operand);
        if (pred)
          dominator = dominator ? commonDominator(*dominator, *pred) : *pred;
      }
      if (!dominator)
        continue; // does not depend on the data
      idom[&op] = *dominator;
      depth[&op] = depth[*dominator] + 1;
    }
  }

  bool dependsOnData(Operation *op) const { return idom.contains(op); }
  /// The dominators of `op` (the source excluded), nearest first.
  SmallVector<Operation *> dominatorsOf(Operation *op) const {
    SmallVector<Operation *> chain;
    for (Operation *next = idom.lookup(op); next; next = idom.lookup(next))
      chain.push_back(next);
    return chain;
  }
  bool dependsOnData(Value value) const {
    return sources.contains(value) ||
           (value.getDefiningOp() && dependsOnData(value.getDefiningOp()));
  }
  /// The immediate dominator (null: the source).
  Operation *dominator(Operation *op) const { return idom.lookup(op); }

private:
  /// The node a data-dependent value hangs from: its defining op, or the
  /// source for an input; nothing for values that do not depend on data.
  std::optional<Operation *> predecessor(Value value) const {
    if (sources.contains(value))
      return nullptr;
    Operation *def = value.getDefiningOp();
    if (def && idom.contains(def))
      return def;
    return std::nullopt;
  }
  Operation *commonDominator(Operation *a, Operation *b) const {
    while (a != b) {
      if (depth.lookup(a) >= depth.lookup(b))
        a = idom.lookup(a);
      else
        b = idom.lookup(b);
    }
    return a;
  }

  DenseSet<Value> sources;
  DenseMap<Operation *, Operation *> idom;
  DenseMap<Operation *, unsigned> depth;
};

int64_t elementCount(Operation *op) {
  int64_t most = 0;
  for (Type type : op->getResultTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && tensor.hasStaticShape())
      most = std::max(most, tensor.getNumElements());
  return most;
}

bool isRecomputable(Operation *op) {
  return op->getNumRegions() == 0 && isPure(op) &&
         !isa<OptimizationBarrierOp>(op);
}

} // namespace

std::optional<RematPolicy> parseRematPolicy(StringRef text) {
  auto [base, count] = text.split(':');
  RematPolicy policy;
  policy.perBlock = base == "per-block";
  if (!text.contains(':'))
    return base == "selective" || policy.perBlock
               ? std::optional<RematPolicy>(policy)
               : std::nullopt;
  if (!policy.perBlock || count.getAsInteger(10, policy.wholeSegments) ||
      policy.wholeSegments < 0)
    return std::nullopt;
  return policy;
}

namespace {

struct RematerializePass
    : public impl::LmcRematerializeBase<RematerializePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<RematPolicy> parsed = parseRematPolicy(policy);
    if (!parsed) {
      module.emitError("unknown rematerialization policy '")
          << policy
          << "' (expected per-block, per-block:<segments> or selective)";
      return signalPassFailure();
    }
    parsedPolicy = *parsed;
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func || !func.getBody().hasOneBlock()) {
      module.emitError("expected a single-block function named '")
          << function << "' (run lmc-autodiff first)";
      return signalPassFailure();
    }
    rematerialize(func);
  }

  RematPolicy parsedPolicy; // from `policy`

  void rematerialize(func::FuncOp func) {
    Block &body = func.getBody().front();
    DenseSet<Operation *> forward = forwardOps(func);
    Operation *loss = body.getTerminator()->getOperand(0).getDefiningOp();
    if (!loss)
      return;
    // The data flows in from several inputs (tokens and labels, say), and
    // the labels join at the loss, where no value dominates both. The
    // segments follow the input with the most cuts: the model's input,
    // whose path to the loss is the network.
    std::optional<DataDominators> best;
    size_t mostCuts = 0;
    for (BlockArgument arg : func.getArguments()) {
      if (!func.getArgAttr(arg.getArgNumber(), attrs::kInput))
        continue;
      DataDominators candidate(func, forward, arg);
      size_t count = candidate.dominatorsOf(loss).size();
      if (candidate.dependsOnData(loss) && (!best || count > mostCuts)) {
        best.emplace(std::move(candidate));
        mostCuts = count;
      }
    }
    if (!best)
      return;
    const DataDominators &dominators = *best;
    // The cuts: the loss's dominators, the source excluded.
    DenseSet<Operation *> cuts;
    for (Operation *op : dominators.dominatorsOf(loss))
      cuts.insert(op);
    // Each data-dependent forward op's segment: its nearest dominating cut
    // (null: the segment that starts at the inputs).
    DenseMap<Operation *, Operation *> segmentOf;
    for (Operation &op : body.without_terminator()) {
      if (!forward.contains(&op) || !dominators.dependsOnData(&op))
        continue;
      Operation *dominator = dominators.dominator(&op);
      segmentOf[&op] = !dominator || cuts.contains(dominator)
                           ? dominator
                           : segmentOf.lookup(dominator);
    }
    // The return hands out the forward's loss and buffers as they are.
    auto isBackward = [&](Operation *user) {
      Operation *top = body.findAncestorOpInBlock(*user);
      return !forward.contains(top) && !isa<func::ReturnOp>(top);
    };
    // Segments are numbered in program order, 0 the one starting at the
    // inputs: per-block:N recomputes 0 .. N-1 whole.
    DenseMap<Operation *, int64_t> segmentNumber;
    for (Operation &op : body.without_terminator())
      if (cuts.contains(&op))
        segmentNumber[&op] = int64_t(segmentNumber.size()) + 1;
    auto isWhole = [&](Operation *cut) {
      return parsedPolicy.perBlock &&
             (parsedPolicy.wholeSegments < 0 ||
              (cut ? segmentNumber.lookup(cut) : 0) <
                  parsedPolicy.wholeSegments);
    };
    // Whether a forward op of this segment is to be recomputed.
    auto recomputes = [&](Operation *op) {
      if (!segmentOf.contains(op) || cuts.contains(op) || !isRecomputable(op))
        return false;
      Operation *cut = segmentOf.lookup(op);
      if (isWhole(cut))
        return true;
      return cut && elementCount(op) > elementCount(cut);
    };

    // Per segment, in program order: the ops to recompute (the forward
    // values the backward pass reads and, back to the segment's inputs,
    // what they are computed from).
    llvm::MapVector<Operation *, llvm::SetVector<Operation *>> plans;
    for (Operation &op : body.without_terminator()) {
      if (!recomputes(&op) ||
          llvm::none_of(op.getUsers(), [&](Operation *user) {
            return isBackward(user);
          }))
        continue;
      llvm::SetVector<Operation *> &plan = plans[segmentOf.lookup(&op)];
      SmallVector<Operation *> worklist{&op};
      while (!worklist.empty()) {
        Operation *next = worklist.pop_back_val();
        if (!plan.insert(next))
          continue;
        for (Value operand : next->getOperands())
          if (Operation *def = operand.getDefiningOp(); def && recomputes(def))
            worklist.push_back(def);
      }
    }
    int64_t recomputed = 0;
    for (auto &[cut, plan] : plans)
      recomputed += recomputeSegment(body, plan.takeVector(), isBackward,
                                     dominators);
    Builder b(&getContext());
    getOperation()->setAttr(
        attrs::kRemat,
        b.getDictionaryAttr(
            {b.getNamedAttr("policy", b.getStringAttr(policy)),
             b.getNamedAttr("cuts", b.getI64IntegerAttr(cuts.size())),
             b.getNamedAttr("recomputed", b.getI64IntegerAttr(recomputed))}));
  }

  /// Clones `ops` (in program order) right before the first backward op
  /// that reads one of them, reading the segment's inputs through barriers,
  /// and points the backward readers at the clones. Returns the ops cloned.
  int64_t recomputeSegment(Block &body, SmallVector<Operation *> ops,
                           function_ref<bool(Operation *)> isBackward,
                           const DataDominators &dominators) {
    llvm::sort(ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    DenseSet<Operation *> cloned(ops.begin(), ops.end());
    Operation *firstReader = nullptr;
    for (Operation *op : ops)
      for (Operation *user : op->getUsers()) {
        if (!isBackward(user))
          continue;
        Operation *top = body.findAncestorOpInBlock(*user);
        if (!firstReader || top->isBeforeInBlock(firstReader))
          firstReader = top;
      }
    if (!firstReader)
      return 0;
    OpBuilder b(firstReader);
    IRMapping mapping;
    for (Operation *op : ops)
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (mapping.contains(operand) || (def && cloned.contains(def)) ||
            !dominators.dependsOnData(operand))
          continue;
        mapping.map(operand, OptimizationBarrierOp::create(
                                 b, operand.getLoc(), operand.getType(),
                                 operand)
                                 .getResult());
      }
    // The clones read the mapped values, never the originals: only the
    // backward readers move over.
    for (Operation *op : ops) {
      Operation *clone = b.clone(*op, mapping);
      clone->setAttr(attrs::kRecomputed, b.getUnitAttr());
      for (auto [original, copy] :
           llvm::zip(op->getResults(), clone->getResults()))
        original.replaceUsesWithIf(copy, [&](OpOperand &use) {
          return isBackward(use.getOwner());
        });
    }
    return int64_t(ops.size());
  }
};

} // namespace
} // namespace lmc
