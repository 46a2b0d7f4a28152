//===- RuntimeSites.cpp - Where a run-time check came from ---------------===//
//
// A check the step makes at run time (a computed gather index, an integer
// divisor) ends the run through the runtime with the name of the op's ONNX
// node or DSL position, kept in the module as a constant string.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace lmc::lowering {

std::string siteOf(Location loc, StringRef kind) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return (kind + " '" + name.getName().getValue() + "'").str();
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    if (file.getLine() != 0)
      return (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()) + ": " + kind.lower())
          .str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string site = siteOf(inner, kind);
      if (site != kind.lower())
        return site;
    }
  // The forward pass inlined into the steps.
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return siteOf(call.getCallee(), kind);
  return kind.lower();
}

std::string declareSiteText(OpBuilder &b, ModuleOp module, Location loc,
                            std::string site, StringRef prefix) {
  site.push_back('\0');
  SymbolTable symbols(module);
  std::string symbol = prefix.str();
  for (int n = 0; symbols.lookup(symbol); ++n)
    symbol = (prefix + "_" + Twine(n)).str();
  auto text = LLVM::LLVMArrayType::get(IntegerType::get(b.getContext(), 8),
                                       site.size());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  LLVM::GlobalOp::create(b, loc, text, /*isConstant=*/true,
                         LLVM::Linkage::Internal, symbol,
                         b.getStringAttr(site));
  return symbol;
}

} // namespace lmc::lowering
