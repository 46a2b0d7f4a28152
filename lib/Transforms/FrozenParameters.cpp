//===- FrozenParameters.cpp - the user's --freeze / --train ---------------===//

#include "FrozenParameters.h"

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <tuple>

using namespace mlir;

namespace lmc {

FailureOr<FrozenParameters>
FrozenParameters::create(Operation *op, StringRef freeze, StringRef train) {
  FrozenParameters frozen;
  if (auto fused = op->getAttrOfType<DictionaryAttr>(attrs::kPieces))
    for (NamedAttribute whole : fused)
      for (StringRef piece :
           cast<ArrayAttr>(whole.getValue()).getAsValueRange<StringAttr>())
        frozen.fusedNames[piece] = whole.getName().getValue();
  for (auto [pattern, flag, regex] :
       {std::make_tuple(freeze, "freeze", &frozen.freeze),
        std::make_tuple(train, "train", &frozen.train)}) {
    if (pattern.empty())
      continue;
    *regex = llvm::Regex(("^(" + pattern + ")$").str());
    std::string error;
    if (!(*regex)->isValid(error))
      return op->emitError("invalid --")
             << flag << " regex '" << pattern << "': " << error;
  }
  return frozen;
}

bool FrozenParameters::isFrozen(StringRef name) const {
  if (auto fused = fusedNames.find(name); fused != fusedNames.end())
    name = fused->second;
  if (freeze && freeze->match(name))
    return true;
  return train && !train->match(name);
}

ElementsAttr FrozenParameters::frozenValue(Value value) const {
  auto arg = dyn_cast<BlockArgument>(value);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  if (!func || arg.getOwner() != &func.getBody().front())
    return {};
  unsigned index = arg.getArgNumber();
  auto name = func.getArgAttrOfType<StringAttr>(index, attrs::kParam);
  if (!name || func.getArgAttr(index, attrs::kFrozen) ||
      !isFrozen(name.getValue()))
    return {};
  return func.getArgAttrOfType<ElementsAttr>(arg.getArgNumber(), attrs::kInit);
}

} // namespace lmc
