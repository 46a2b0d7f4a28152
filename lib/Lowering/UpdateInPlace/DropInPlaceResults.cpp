//===- DropInPlaceResults.cpp - results bufferization wrote over arguments ===//
//
// After one-shot bufferization, a result lmc-tie-updates-to-arguments tied
// to an argument is that argument's buffer when the analysis found the
// update safe to write in place. The runtime then needs one copy of the
// tensor instead of two, but only if every entry point that returns it
// updated it in place (train_step and apply_step share the runtime's
// buffers). Those results leave the functions; the module records which
// tensors (`lmc.in_place`, the descriptor's `inplace` lines) and which
// slots of each entry point's packed buffer list are gone
// (`lmc.in_place_slots`, for the driver's wrappers). A result updated in
// place in one entry point but not in another stays: out-params copy it.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace lmc {
#define GEN_PASS_DEF_LMCDROPINPLACERESULTS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

struct TiedResult {
  func::FuncOp func;
  unsigned index;
  std::string name;
};

struct DropInPlaceResultsPass
    : public impl::LmcDropInPlaceResultsBase<DropInPlaceResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<TiedResult> tied;
    llvm::StringMap<bool> everywhere; // name -> in place in every function
    for (StringRef entry : {attrs::kTrainStep, attrs::kApplyStep}) {
      auto func = module.lookupSymbol<func::FuncOp>(entry);
      if (!func || !func.getBody().hasOneBlock())
        continue;
      auto returnOp =
          cast<func::ReturnOp>(func.getBody().front().getTerminator());
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        std::optional<attrs::Role> role =
            attrs::roleIn(func.getResultAttrDict(i));
        auto name = func.getResultAttrOfType<StringAttr>(i, attrs::kName);
        if (!name || (role != attrs::Role::Param && role != attrs::Role::State))
          continue;
        // An untied result of a tensor counts as written elsewhere.
        bool inPlace = false;
        if (auto argument = func.getResultAttrOfType<IntegerAttr>(
                i, attrs::kUpdatesArgument)) {
          func.removeResultAttr(
              i, StringAttr::get(&getContext(), attrs::kUpdatesArgument));
          inPlace = stripCasts(returnOp.getOperand(i)) ==
                    func.getArgument(argument.getInt());
          tied.push_back({func, i, name.str()});
        }
        auto [it, added] = everywhere.try_emplace(name, inPlace);
        if (!added)
          it->second = it->second && inPlace;
      }
    }
    Builder b(&getContext());
    llvm::SetVector<Attribute> names;
    llvm::MapVector<func::FuncOp, llvm::BitVector> dropped;
    for (TiedResult &result : tied) {
      if (!everywhere.lookup(result.name))
        continue;
      llvm::BitVector &bits = dropped[result.func];
      bits.resize(result.func.getNumResults());
      bits.set(result.index);
      names.insert(b.getStringAttr(result.name));
    }
    if (dropped.empty())
      return;
    SmallVector<NamedAttribute> slots;
    for (auto &[func, bits] : dropped) {
      // The packed buffer list holds the arguments, then the results.
      SmallVector<int64_t> gone;
      for (unsigned i : bits.set_bits())
        gone.push_back(func.getNumArguments() + i);
      slots.push_back(
          b.getNamedAttr(func.getName(), b.getDenseI64ArrayAttr(gone)));
      auto returnOp =
          cast<func::ReturnOp>(func.getBody().front().getTerminator());
      returnOp->eraseOperands(bits);
      if (failed(func.eraseResults(bits))) {
        func.emitOpError("cannot drop the results updated in place");
        return signalPassFailure();
      }
    }
    module->setAttr(attrs::kInPlace, b.getArrayAttr(names.getArrayRef()));
    module->setAttr(attrs::kInPlaceSlots, b.getDictionaryAttr(slots));
  }
};

} // namespace
} // namespace lmc
