//===- FrozenParameters.cpp - the user's --freeze / --train ---------------===//

#include "FrozenParameters.h"

#include "lmc/Transforms/Attributes.h"


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

bool FrozenParameters::isFrozen(func::FuncOp func, unsigned index) const {
  if (func.getArgAttr(index, attrs::kFrozen))
    return true;
  auto name = func.getArgAttrOfType<StringAttr>(index, attrs::kParam);
  return name && isFrozen(name.getValue());
}

ElementsAttr FrozenParameters::frozenValue(Value value) const {
  auto arg = dyn_cast<BlockArgument>(value);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  if (!func || arg.getOwner() != &func.getBody().front())
    return {};
  if (!func.getArgAttr(arg.getArgNumber(), attrs::kParam) ||
      !isFrozen(func, arg.getArgNumber()))
    return {};
  return func.getArgAttrOfType<ElementsAttr>(arg.getArgNumber(), attrs::kInit);
}

} // namespace lmc
