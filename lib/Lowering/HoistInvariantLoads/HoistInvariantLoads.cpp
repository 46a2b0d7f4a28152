//===- HoistInvariantLoads.cpp - loads a loop repeats, read once before it ===//
//
// A gather's loop nest (an embedding lookup: out[b, t, :] = table[ids[b,
// t], :]) reads its row index inside the loop over the row's columns: the
// loop of linalg-to-loops reads every operand in its innermost body. LLVM
// would hoist that load and vectorize the columns, but only if the stores
// of the loop cannot write the index; the outlined nest's `llvm.noalias`
// arguments say they cannot, and that fact is gone by the time LLVM sees
// the loop (OpenMP outlines the parallel body again, passing its pointers
// through a struct). The GPT benchmark's token and position embedding
// loop ran scalar, 0.27 ms per step. Here, on loops and buffers, the same
// facts are still at hand.
//
// A memref.load moves out of the scf.for it is in when its buffer and
// indices come from outside the loop, the loop runs at least once
// (constant bounds, so the load executed before it was executed anyway),
// the loop's only memory effects are loads and stores, and no store in
// the loop can write what it reads: each stored buffer views another
// buffer than the loaded one, one of the two an `llvm.noalias` argument
// of the function, or the load reads a constant global. Only where loads
// happen changes; no value does.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "../Common/Views.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace lmc {
#define GEN_PASS_DEF_LMCHOISTINVARIANTLOADS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Whether `buffer` is an argument of `func` marked llvm.noalias.
bool isNoAliasArgument(Value buffer, func::FuncOp func) {
  auto argument = dyn_cast<BlockArgument>(buffer);
  return argument && argument.getOwner() == &func.getBody().front() &&
         func.getArgAttr(argument.getArgNumber(), "llvm.noalias");
}

/// Whether `buffer` is a constant global, which nothing stores to.
bool isConstantGlobal(Value buffer, func::FuncOp func) {
  auto get = buffer.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return false;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      func, get.getNameAttr());
  return global && global.getConstant();
}

/// Whether the loop runs at least once: constant bounds, lower below upper.
bool runsAtLeastOnce(scf::ForOp loop) {
  APInt lower, upper;
  return matchPattern(loop.getLowerBound(), m_ConstantInt(&lower)) &&
         matchPattern(loop.getUpperBound(), m_ConstantInt(&upper)) &&
         lower.slt(upper);
}

/// The buffers the loop stores to (as rootBuffer()), or nothing when an
/// op in it has memory effects other than loads and stores.
std::optional<SmallVector<Value>> storedBuffers(scf::ForOp loop) {
  SmallVector<Value> stored;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      stored.push_back(rootBuffer(store.getMemref()));
      return WalkResult::advance();
    }
    if (isa<memref::LoadOp>(op) || isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return stored;
}

/// Hoists the loads of `loop` that qualify (see the file comment).
void hoistLoads(scf::ForOp loop, func::FuncOp func) {
  if (!runsAtLeastOnce(loop))
    return;
  std::optional<SmallVector<Value>> stored = storedBuffers(loop);
  if (!stored)
    return;
  Region &body = loop.getRegion();
  auto definedOutside = [&](Value value) {
    return !body.isAncestor(value.getParentRegion());
  };
  auto cannotBeWritten = [&](Value read) {
    if (isConstantGlobal(read, func))
      return true;
    return llvm::all_of(*stored, [&](Value written) {
      return written != read && (isNoAliasArgument(written, func) ||
                                 isNoAliasArgument(read, func));
    });
  };
  for (Operation &op : llvm::make_early_inc_range(*loop.getBody())) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (load && definedOutside(load.getMemref()) &&
        llvm::all_of(load.getIndices(), definedOutside) &&
        cannotBeWritten(rootBuffer(load.getMemref())))
      load->moveBefore(loop);
  }
}

struct HoistInvariantLoadsPass
    : public impl::LmcHoistInvariantLoadsBase<HoistInvariantLoadsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(attrs::kOutlined))
        continue;
      // Innermost loops first: a load hoisted out of one may then leave
      // the loop around it too.
      func.walk<WalkOrder::PostOrder>(
          [&](scf::ForOp loop) { hoistLoads(loop, func); });
    }
  }
};

} // namespace
} // namespace lmc
