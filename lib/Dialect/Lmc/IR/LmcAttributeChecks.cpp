//===- LmcAttributeChecks.cpp - What the lmc.* attributes may hold --------===//
//
// The importers and passes hand each other facts as `lmc.*` attributes
// (LmcAttributes.h); a pass that writes a misspelt role or optimizer would
// otherwise be found only by the runtime, reading the descriptor. The
// dialect checks the values of those whose meaning is fixed; the others
// (layout facts of the lowering: lmc.planned, lmc.outlined, ...) are free.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Dialect/Lmc/IR/LmcEnums.h"
#include "lmc/runtime/descriptor_lines.h"
#include "lmc/runtime/optimizers.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace lmc;

namespace {

/// `where` ("argument 2", "result 0", "") says whose attribute it is.
LogicalResult expectName(Operation *op, StringRef where, NamedAttribute attr) {
  auto text = dyn_cast<StringAttr>(attr.getValue());
  if (text && !text.empty())
    return success();
  return op->emitOpError() << where << (where.empty() ? "" : ": ")
                           << attr.getName().getValue()
                           << " must be a non-empty string";
}

LogicalResult expectUnit(Operation *op, StringRef where, NamedAttribute attr) {
  if (isa<UnitAttr>(attr.getValue()))
    return success();
  return op->emitOpError() << where << ": " << attr.getName().getValue()
                           << " is a flag (a unit attribute)";
}

/// The attributes of an entry point's argument or result.
LogicalResult verifyValueAttribute(Operation *op, StringRef where,
                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == attrs::kRole) {
    auto role = dyn_cast<StringAttr>(attr.getValue());
    if (role && descriptor::roleNamed(role.getValue()))
      return success();
    return op->emitOpError()
           << where << ": " << attrs::kRole << " must be one of "
           << descriptor::roleChoices() << ", got " << attr.getValue();
  }
  if (llvm::is_contained({attrs::kParam, attrs::kName, attrs::kInput,
                          attrs::kOutput, attrs::kBuffer},
                         name))
    return expectName(op, where, attr);
  if (name == attrs::kInit && !isa<ElementsAttr>(attr.getValue()))
    return op->emitOpError() << where << ": " << attrs::kInit
                             << " must be the initial value (elements)";
  if (llvm::is_contained({attrs::kFrozen, attrs::kRngKey, attrs::kLossScale},
                         name))
    return expectUnit(op, where, attr);
  return success();
}

} // namespace

LogicalResult LmcDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                   unsigned index,
                                                   NamedAttribute attr) {
  return verifyValueAttribute(op, "argument " + std::to_string(index), attr);
}

LogicalResult LmcDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                      unsigned index,
                                                      NamedAttribute attr) {
  return verifyValueAttribute(op, "result " + std::to_string(index), attr);
}

LogicalResult LmcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == attrs::kOptimizer) {
    auto settings = dyn_cast<DictionaryAttr>(attr.getValue());
    auto kind = settings ? settings.getAs<StringAttr>("name") : StringAttr();
    if (kind && optimizerNamed(kind.getValue()))
      return success();
    return op->emitOpError()
           << attrs::kOptimizer << " must be {name = \"<optimizer>\", ...} "
           << "naming " << optimizerChoices() << ", got " << attr.getValue();
  }
  if (name == attrs::kPrecision) {
    auto precision = dyn_cast<StringAttr>(attr.getValue());
    std::optional<Precision> low =
        precision ? symbolizePrecision(precision.getValue()) : std::nullopt;
    if (low && *low != Precision::F32)
      return success();
    return op->emitOpError()
           << attrs::kPrecision
           << " must be \"bf16\" or \"f16\" (absent: f32), got "
           << attr.getValue();
  }
  if (name == attrs::kLoss)
    return expectName(op, "", attr);
  return success();
}
