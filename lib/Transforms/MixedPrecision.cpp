//===- MixedPrecision.cpp - low-precision inputs, f32 accumulation --------===//
//
// Runs after the optimizer phase, on self-contained entry points, so the
// forward and the backward products follow one policy and the update (and
// with it the master weights and optimizer state) never leaves f32.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Regex.h"

namespace lmc {
#define GEN_PASS_DEF_LMCMIXEDPRECISION
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;
using namespace lmc;

namespace {

/// Whether any name in `loc` (NameLoc, possibly inside a FusedLoc or
/// CallSiteLoc) matches.
bool locationMatches(Location loc, const llvm::Regex &regex) {
  bool found = false;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner))
      found |= regex.match(name.getName().getValue());
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// Whether `value` is an entry-point argument whose `lmc.name` matches.
bool argumentMatches(Value value, const llvm::Regex &regex) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return false;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getBody().front())
    return false;
  auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                attrs::kName);
  return name && regex.match(name.getValue());
}

struct MixedPrecisionPass
    : public lmc::impl::LmcMixedPrecisionBase<MixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    Type lowType;
    if (precision == Precision::BF16)
      lowType = b.getBF16Type();
    else if (precision == Precision::F16)
      lowType = b.getF16Type();
    // The whole-name match of --freeze/--train.
    llvm::Regex keep("^(" + keepF32 + ")$");
    std::string regexError;
    if (!keepF32.empty() && !keep.isValid(regexError)) {
      module.emitError("invalid keep-f32 regex '")
          << keepF32 << "': " << regexError;
      return signalPassFailure();
    }
    if (!lowType)
      return;
    module->setAttr(attrs::kPrecision,
                    b.getStringAttr(stringifyPrecision(precision)));

    DenseMap<Value, Value> converted; // f32 value -> its one conversion
    module.walk([&](PrecisionPolicyOpInterface policy) {
      Operation *op = policy.getOperation();
      if (!policy.allowsLowPrecisionInputs() || !computesInF32(op))
        return;
      if (!keepF32.empty() &&
          (locationMatches(op->getLoc(), keep) ||
           llvm::any_of(op->getOperands(), [&](Value v) {
             return argumentMatches(v, keep);
           })))
        return;
      for (OpOperand &operand : op->getOpOperands())
        operand.set(convertOnce(operand.get(), lowType, converted));
    });
  }

  static bool computesInF32(Operation *op) {
    auto isF32 = [](Type t) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      return tensor && tensor.getElementType().isF32();
    };
    return llvm::all_of(op->getOperandTypes(), isF32) &&
           llvm::all_of(op->getResultTypes(), isF32);
  }

  /// The conversion of `value` to `lowType`, created right after its
  /// definition the first time so that it dominates every later user.
  static Value convertOnce(Value value, Type lowType,
                           DenseMap<Value, Value> &converted) {
    if (Value existing = converted.lookup(value))
      return existing;
    OpBuilder b(value.getContext());
    b.setInsertionPointAfterValue(value);
    auto type = cast<RankedTensorType>(value.getType());
    Value low = ConvertOp::create(b, value.getLoc(), type.clone(lowType), value);
    converted[value] = low;
    return low;
  }
};

} // namespace
