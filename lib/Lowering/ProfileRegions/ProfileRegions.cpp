//===- ProfileRegions.cpp - Time each loop nest and runtime call ----------===//
//
// The executable's --profile prints where a step's time goes, per loop nest
// and per BLAS call, named by the model's own nodes. The brackets are
// always compiled in (a load and a branch each when not profiling, against
// loop nests of microseconds or more), so the profiled step is the step
// that runs without the flag.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "../Common/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Path.h"

namespace lmc {
#define GEN_PASS_DEF_LMCPROFILEREGIONS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

constexpr llvm::StringLiteral kRuntimePrefix = "lmc_rt_";
constexpr llvm::StringLiteral kBegin = "lmc_rt_profile_begin";
constexpr llvm::StringLiteral kEnd = "lmc_rt_profile_end";
/// A fused loop nest can carry dozens of node names; the label keeps the
/// first few (in order) and counts the rest.
constexpr size_t kMaxNames = 3;

void addName(SmallVector<std::string> &names, std::string name) {
  if (!llvm::is_contained(names, name))
    names.push_back(std::move(name));
}

/// Collects the names in `loc` (ONNX node names; DSL file:line:col) and
/// whether any part of it is backward code.
void collectNames(Location loc, SmallVector<std::string> &names,
                  bool &backward) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    addName(names, name.getName().str());
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto tag = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      backward |= tag.getValue() == attrs::kBackwardLoc;
    for (Location inner : fused.getLocations())
      collectNames(inner, names, backward);
  } else if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    if (file.getLine() != 0) // 0:0 is "the model file", no position
      addName(names,
              (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
               Twine(file.getLine()) + ":" + Twine(file.getColumn()))
                  .str());
  } else if (auto site = dyn_cast<CallSiteLoc>(loc)) {
    collectNames(site.getCallee(), names, backward);
  }
}

/// One whitespace-free label for the descriptor's `profile` line.
std::string labelOf(Location loc) {
  SmallVector<std::string> names;
  bool backward = false;
  collectNames(loc, names, backward);
  std::string label;
  for (const std::string &name : ArrayRef(names).take_front(kMaxNames))
    label += (label.empty() ? "" : "+") + name;
  if (names.size() > kMaxNames)
    label += "+" + std::to_string(names.size() - kMaxNames) + "-more";
  if (label.empty())
    label = "?";
  if (backward)
    label += "(backward)";
  for (char &c : label)
    if (isspace(static_cast<unsigned char>(c)))
      c = '_';
  return label;
}

/// The region kind of a call: `loop` for an outlined nest, the runtime
/// function's name without its prefix, or nothing for other calls.
std::optional<std::string> kindOf(func::CallOp call, SymbolTable &symbols) {
  StringRef callee = call.getCallee();
  // The brackets themselves, the arena lookup every entry point starts
  // with and the thread count a column sum splits its columns by
  // (bookkeeping: a value returned).
  if (callee == kBegin || callee == kEnd || callee == "lmc_rt_step_arena" ||
      callee == "lmc_rt_thread_count")
    return std::nullopt;
  if (callee.starts_with(kRuntimePrefix))
    return callee.drop_front(kRuntimePrefix.size()).str();
  auto func = symbols.lookup<func::FuncOp>(callee);
  if (func && func->hasAttr(attrs::kOutlined))
    return std::string("loop");
  return std::nullopt;
}

struct ProfileRegionsPass
    : public impl::LmcProfileRegionsBase<ProfileRegionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    func::FuncOp begin =
        declareRuntimeFunction(module, b, kBegin, b.getFunctionType({}, {i64}));
    func::FuncOp end = declareRuntimeFunction(
        module, b, kEnd, b.getFunctionType({i64, i64}, {}));

    SmallVector<Attribute> regions;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func->hasAttr(attrs::kOutlined))
        continue;
      func.walk([&](func::CallOp call) {
        std::optional<std::string> kind = kindOf(call, symbols);
        if (!kind)
          return;
        Location loc = call.getLoc();
        b.setInsertionPoint(call);
        Value start = func::CallOp::create(b, loc, begin).getResult(0);
        b.setInsertionPointAfter(call);
        Value region =
            arith::ConstantIntOp::create(b, loc, i64, regions.size());
        func::CallOp::create(b, loc, end, ValueRange{region, start});
        regions.push_back(b.getStringAttr(func.getSymName() + " " + *kind +
                                          " " + labelOf(loc)));
      });
    }
    module->setAttr(attrs::kProfileRegions, b.getArrayAttr(regions));
  }
};

} // namespace
} // namespace lmc
