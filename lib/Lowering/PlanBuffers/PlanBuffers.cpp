//===- PlanBuffers.cpp - one arena for a function's buffers ---------------===//
//
// After bufferization a step allocates every intermediate on each call and
// frees it at the end (hundreds of mallocs per step, and a peak known only
// by running it). The allocs are in the function's body, in program order,
// and a buffer is dead after the last op that reaches it (ownership-based
// deallocation puts the deallocs at the end of the block, not there), so
// each buffer's lifetime is an interval of that order and the whole plan is
// an interval-packing problem solved here once, at compile time (see
// Passes.td).
//
//===----------------------------------------------------------------------===//

#include "../Common/Reach.h"
#include "../Common/RuntimeCalls.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace lmc {
#define GEN_PASS_DEF_LMCPLANBUFFERS
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Every buffer starts on a cache line (and satisfies any alignment an
/// alloc asks for up to that).
constexpr uint64_t kAlignment = 64;

/// The runtime function that returns the arena (kernels.h).
constexpr llvm::StringLiteral kStepArena = "lmc_rt_step_arena";
/// The runtime function that fills a buffer with 0xFF bytes (kernels.h).
constexpr llvm::StringLiteral kPoisonBuffer = "lmc_rt_poison_buffer";

/// A buffer of the function body: its ops, its lifetime as positions in
/// the body, its size and its place in the arena.
struct Buffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  unsigned start, end;
  uint64_t bytes;
  uint64_t offset = 0;

  bool overlapsInTime(const Buffer &other) const {
    return start <= other.end && other.start <= end;
  }
};

/// The bytes of `type`, rounded up to the alignment, when the arena can
/// hold it: static shape, identity layout, default memory space, whole
/// bytes per element.
std::optional<uint64_t> arenaBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  uint64_t bytes =
      type.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
  return llvm::alignTo(std::max<uint64_t>(bytes, 1), kAlignment);
}

/// The buffers of `body` the arena can take: allocated there and freed
/// there by exactly one dealloc.
SmallVector<Buffer> collectBuffers(Block &body) {
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = index;
  SmallVector<Buffer> buffers;
  for (auto alloc : body.getOps<memref::AllocOp>()) {
    std::optional<uint64_t> bytes = arenaBytes(alloc.getType());
    if (!bytes || alloc.getAlignment().value_or(1) > kAlignment)
      continue;
    SmallVector<memref::DeallocOp> deallocs;
    for (Operation *user : alloc->getUsers())
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user))
        deallocs.push_back(dealloc);
    if (deallocs.size() != 1 || deallocs[0]->getBlock() != &body)
      continue;
    // Dead after its last reader or writer (through views and pointers).
    Operation *last = lastReachingOp(body, alloc, deallocs[0]);
    buffers.push_back({alloc, deallocs[0], position[alloc],
                       last ? position[last] : position[alloc], *bytes});
  }
  return buffers;
}

/// Gives each buffer of `order` in turn an offset at the lowest aligned
/// place clear of the buffers placed before it that are alive at the same
/// time; returns the arena's size.
uint64_t placeFirstFit(ArrayRef<Buffer *> order) {
  uint64_t arena = 0;
  SmallVector<Buffer *> placed;
  for (Buffer *buffer : order) {
    SmallVector<Buffer *> live;
    for (Buffer *other : placed)
      if (other->overlapsInTime(*buffer))
        live.push_back(other);
    llvm::sort(live, [](const Buffer *a, const Buffer *b) {
      return a->offset < b->offset;
    });
    uint64_t offset = 0;
    for (Buffer *other : live) {
      if (offset + buffer->bytes <= other->offset)
        break;
      offset = std::max(offset, other->offset + other->bytes);
    }
    buffer->offset = offset;
    arena = std::max(arena, offset + buffer->bytes);
    placed.push_back(buffer);
  }
  return arena;
}

/// Places the buffers first fit in program order (as malloc would, so a
/// buffer tends to reuse bytes freed just before, still in cache), unless
/// placing them largest first saves more than 1/64 of the arena. Largest
/// first reaches the most bytes ever alive at once on the benchmark models'
/// steps, program order not always; a saving of a percent or so is not
/// worth the cache reuse program order keeps (docs/perf.md, "Measurements
/// behind the kernels' choices").
/// Returns the arena's size.
uint64_t placeBuffers(MutableArrayRef<Buffer> buffers) {
  SmallVector<Buffer *> order;
  for (Buffer &buffer : buffers)
    order.push_back(&buffer);
  const uint64_t inProgramOrder = placeFirstFit(order);
  SmallVector<uint64_t> offsets;
  for (Buffer &buffer : buffers)
    offsets.push_back(buffer.offset);
  llvm::stable_sort(order, [](const Buffer *a, const Buffer *b) {
    return a->bytes > b->bytes;
  });
  const uint64_t largestFirst = placeFirstFit(order);
  if (largestFirst + inProgramOrder / 64 < inProgramOrder)
    return largestFirst;
  for (auto [buffer, offset] : llvm::zip(buffers, offsets))
    buffer.offset = offset;
  return inProgramOrder;
}

/// Where the planned functions find the arena: a private global of the
/// module, or the runtime's `lmc_rt_step_arena` (arena-from-runtime).
struct ArenaSource {
  memref::GlobalOp global;
  func::FuncOp runtime;
  uint64_t bytes;

  Value materialize(OpBuilder &builder, Location loc) {
    if (global)
      return memref::GetGlobalOp::create(builder, loc, global.getType(),
                                         global.getSymName());
    Value size = arith::ConstantIntOp::create(builder, loc, bytes, 64);
    return func::CallOp::create(builder, loc, runtime, size).getResult(0);
  }
};

/// Replaces each buffer of `function` by its view of the arena; with
/// `poison`, calls it on the view's first byte and size where the buffer
/// was allocated.
void placeInArena(func::FuncOp function, MutableArrayRef<Buffer> buffers,
                  ArenaSource &source, func::FuncOp poison) {
  OpBuilder builder(function.getContext());
  builder.setInsertionPointToStart(&function.getBody().front());
  Value arena = source.materialize(builder, function.getLoc());
  for (Buffer &buffer : buffers) {
    memref::AllocOp alloc = buffer.alloc;
    builder.setInsertionPoint(alloc);
    Value offset =
        arith::ConstantIndexOp::create(builder, alloc.getLoc(), buffer.offset);
    auto view = memref::ViewOp::create(builder, alloc.getLoc(), alloc.getType(),
                                       arena, offset, ValueRange());
    view->setAttr(attrs::kPlanned, builder.getUnitAttr());
    if (poison) {
      auto first = memref::ViewOp::create(
          builder, alloc.getLoc(), MemRefType::get({1}, builder.getI8Type()),
          arena, offset, ValueRange());
      Value bytes = arith::ConstantIntOp::create(builder, alloc.getLoc(),
                                                 buffer.bytes, 64);
      func::CallOp::create(builder, alloc.getLoc(), poison,
                           ValueRange{first, bytes});
    }
    alloc.replaceAllUsesWith(view.getResult());
    buffer.dealloc.erase();
    alloc.erase();
  }
}

/// A function's planned buffers and the size of the arena they need.
struct Plan {
  func::FuncOp function;
  SmallVector<Buffer> buffers;
  uint64_t bytes;
};

struct PlanBuffersPass : public impl::LmcPlanBuffersBase<PlanBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    // Only the functions nothing in the module calls: the entry points,
    // which the runtime calls one at a time, so they can share one arena
    // (a function called from another, or from itself, would need one of
    // its own per active call).
    ModuleOp module = getOperation();
    SmallVector<Plan> plans;
    uint64_t arenaSize = 0;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (!function.getBody().hasOneBlock() ||
          !SymbolTable::symbolKnownUseEmpty(function, module))
        continue;
      SmallVector<Buffer> buffers = collectBuffers(function.getBody().front());
      if (buffers.empty())
        continue;
      uint64_t bytes = placeBuffers(buffers);
      arenaSize = std::max(arenaSize, bytes);
      plans.push_back({function, std::move(buffers), bytes});
    }
    if (plans.empty())
      return;

    auto builder = OpBuilder::atBlockBegin(module.getBody());
    auto type = MemRefType::get({int64_t(arenaSize)}, builder.getI8Type());
    ArenaSource source{{}, {}, arenaSize};
    if (arenaFromRuntime) {
      source.runtime = declareRuntimeFunction(
          module, builder, kStepArena,
          builder.getFunctionType({builder.getI64Type()}, {type}));
    } else {
      // A global: allocated per call, an arena above glibc's mmap threshold
      // would be mapped and page-faulted in afresh on every step.
      source.global = memref::GlobalOp::create(
          builder, module.getLoc(), "__lmc_arena",
          builder.getStringAttr("private"), type,
          /*initial_value=*/builder.getUnitAttr(), /*constant=*/false,
          builder.getI64IntegerAttr(kAlignment));
      SymbolTable(module).insert(source.global); // renames on a clash
    }
    func::FuncOp poisonFn;
    if (poison)
      poisonFn = declareRuntimeFunction(
          module, builder, kPoisonBuffer,
          builder.getFunctionType(
              {MemRefType::get({1}, builder.getI8Type()), builder.getI64Type()},
              {}));
    SmallVector<NamedAttribute> sizes;
    for (Plan &plan : plans) {
      placeInArena(plan.function, plan.buffers, source, poisonFn);
      sizes.push_back(builder.getNamedAttr(
          plan.function.getSymName(), builder.getI64IntegerAttr(plan.bytes)));
    }
    module->setAttr(attrs::kArenas, builder.getDictionaryAttr(sizes));
  }
};

} // namespace
} // namespace lmc
