//===- TieUpdates.cpp - updated params and state written over the old -----===//
//
// A training step returns every parameter and optimizer state tensor it
// updates. Written into fresh buffers, the runtime has to keep two copies
// of each (the step reads one and writes the other): 24 bytes per
// parameter for AdamW instead of 12. The last op computing an updated
// tensor is an elementwise linalg op whose destination is an empty tensor;
// pointing that destination at the step's own argument lets one-shot
// bufferization write the update over the old value, and its analysis
// decides whether that is safe (no later reader of the old value) or
// copies. lmc-drop-in-place-results then removes the results that did
// become the argument.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace lmc {
#define GEN_PASS_DEF_LMCTIEUPDATESTOARGUMENTS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// "param NAME" or "state NAME" for a parameter or optimizer state (what a
/// step updates), keyed alike on arguments and results; "" for the rest.
std::string updatedKey(DictionaryAttr attributes) {
  std::optional<attrs::Role> role = attrs::roleIn(attributes);
  auto name =
      attributes ? attributes.getAs<StringAttr>(attrs::kName) : StringAttr();
  if ((role != attrs::Role::Param && role != attrs::Role::State) || !name)
    return "";
  return std::string(descriptor::roleName(*role)) + " " + name.str();
}

/// Points the destination of the op that computes result `index` of `func`
/// at the argument with the same role and name, when that destination's
/// value is not read (an empty tensor, or a tensor the payload ignores);
/// tags the result with the argument's position. `taken`: arguments already
/// some other result's destination.
void tieResult(func::FuncOp func, unsigned index,
               const llvm::StringMap<unsigned> &argumentOf,
               DenseSet<unsigned> &taken) {
  const std::string key = updatedKey(func.getResultAttrDict(index));
  if (key.empty())
    return;
  auto found = argumentOf.find(key);
  if (found == argumentOf.end() || taken.contains(found->second))
    return;
  BlockArgument argument = func.getArgument(found->second);
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  auto result = dyn_cast<OpResult>(returnOp.getOperand(index));
  auto producer =
      result ? dyn_cast<linalg::LinalgOp>(result.getOwner()) : nullptr;
  if (!producer || !producer.hasPureTensorSemantics() ||
      result.getType() != argument.getType())
    return;
  OpOperand *init = producer.getDpsInitOperand(result.getResultNumber());
  if (init->get() != argument && producer.payloadUsesValueFromOperand(init))
    return;
  init->set(argument);
  taken.insert(found->second);
  func.setResultAttr(
      index, attrs::kUpdatesArgument,
      IntegerAttr::get(IntegerType::get(func.getContext(), 64), found->second));
}

struct TieUpdatesToArgumentsPass
    : public impl::LmcTieUpdatesToArgumentsBase<TieUpdatesToArgumentsPass> {
  void runOnOperation() override {
    for (StringRef entry : {attrs::kTrainStep, attrs::kApplyStep}) {
      auto func = getOperation().lookupSymbol<func::FuncOp>(entry);
      if (!func || !func.getBody().hasOneBlock())
        continue;
      llvm::StringMap<unsigned> argumentOf; // "role name" -> position
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        std::string key = updatedKey(func.getArgAttrDict(i));
        if (!key.empty())
          argumentOf[key] = i;
      }
      DenseSet<unsigned> taken;
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        tieResult(func, i, argumentOf, taken);
    }
  }
};

} // namespace
} // namespace lmc
