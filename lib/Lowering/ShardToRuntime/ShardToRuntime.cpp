//===- ShardToRuntime.cpp - The partitioned step's collectives as calls ---===//
//
// The runtime owns the processes (MPI today, NCCL on GPUs) and their model
// group, so the compiled step only calls it: one call per collective, on a
// buffer the bufferization later reuses. Upstream's convert-shard-to-mpi
// would instead split MPI_COMM_WORLD on every call.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/RuntimeCalls.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace lmc {
#define GEN_PASS_DEF_LMCSHARDTORUNTIME
#include "lmc/Lowering/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kAllReduceSum = "lmc_rt_model_all_reduce_f32";
constexpr llvm::StringLiteral kAllReduceMax = "lmc_rt_model_all_reduce_max_f32";
constexpr llvm::StringLiteral kAllGather = "lmc_rt_model_all_gather_f32";
constexpr llvm::StringLiteral kRank = "lmc_rt_model_rank";

class Lowering {
public:
  explicit Lowering(ModuleOp module)
      : module_(module), b_(module.getContext()) {}

  LogicalResult run() {
    WalkResult walk = module_.walk([&](Operation *op) {
      if (op->getDialect() != op->getContext()->getLoadedDialect("shard") ||
          isa<shard::GridOp>(op))
        return WalkResult::advance();
      b_.setInsertionPoint(op);
      LogicalResult lowered =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](shard::AllReduceOp o) { return lower(o); })
              .Case([&](shard::AllGatherOp o) { return lower(o); })
              .Case([&](shard::AllSliceOp o) { return lower(o); })
              .Case([&](shard::ProcessMultiIndexOp o) { return lower(o); })
              .Default([&](Operation *o) {
                return o->emitError("lmc cannot run '")
                       << o->getName() << "' in a compiled step yet";
              });
      return failed(lowered) ? WalkResult::interrupt() : WalkResult::skip();
    });
    if (walk.wasInterrupted())
      return failure();
    for (auto grid :
         llvm::make_early_inc_range(module_.getOps<shard::GridOp>()))
      grid.erase();
    return success();
  }

private:
  /// The grid is one axis, `model`, whose processes the runtime's model
  /// group are (lmc-shard-annotate builds no other).
  LogicalResult checkGrid(Operation *op, ArrayRef<shard::GridAxis> axes) {
    auto grid = module_.lookupSymbol<shard::GridOp>(lmc::attrs::kShardGrid);
    if (!grid || grid.getRank() != 1 || axes.size() > 1)
      return op->emitError("lmc runs collectives over its one-axis grid "
                           "@mesh only");
    return success();
  }

  func::FuncOp declare(StringRef name, TypeRange args, TypeRange results) {
    return lmc::declareRuntimeFunction(module_, b_, name,
                                       b_.getFunctionType(args, results));
  }

  Value pointerTo(Location loc, Value buffer) {
    return lmc::bufferPointer(b_, loc, buffer);
  }

  Value i64(Location loc, int64_t value) {
    return arith::ConstantIntOp::create(b_, loc, value, 64);
  }

  /// A fresh buffer holding `tensor`'s values.
  Value copyToBuffer(Location loc, Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value source = bufferization::ToBufferOp::create(
        b_, loc, memrefType, tensor, /*read_only=*/true);
    Value copy = memref::AllocOp::create(b_, loc, memrefType);
    memref::CopyOp::create(b_, loc, source, copy);
    return copy;
  }

  Value toTensor(Location loc, Value buffer, Type type) {
    return bufferization::ToTensorOp::create(b_, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  LogicalResult checkF32(Operation *op, Type type) {
    if (!cast<ShapedType>(type).getElementType().isF32())
      return op->emitError("lmc runs '")
             << op->getName() << "' on f32 tensors only";
    return success();
  }

  LogicalResult lower(shard::AllReduceOp op) {
    if (failed(checkGrid(op, op.getGridAxes())) ||
        failed(checkF32(op, op.getType())))
      return failure();
    StringRef callee;
    if (op.getReduction() == shard::ReductionKind::Sum)
      callee = kAllReduceSum;
    else if (op.getReduction() == shard::ReductionKind::Max)
      callee = kAllReduceMax;
    else
      return op.emitError("lmc runs sum and max all-reduces only");
    Location loc = op.getLoc();
    Value buffer = copyToBuffer(loc, op.getInput());
    auto type = cast<RankedTensorType>(op.getType());
    Type ptr = LLVM::LLVMPointerType::get(b_.getContext());
    func::CallOp::create(
        b_, loc, declare(callee, {ptr, b_.getI64Type()}, {}),
        ValueRange{pointerTo(loc, buffer), i64(loc, type.getNumElements())});
    op.replaceAllUsesWith(toTensor(loc, buffer, type));
    op.erase();
    return success();
  }

  LogicalResult lower(shard::AllGatherOp op) {
    if (failed(checkGrid(op, op.getGridAxes())) ||
        failed(checkF32(op, op.getType())))
      return failure();
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getGatherAxis().getSExtValue();
    int64_t outer = 1, chunk = 1;
    for (auto [d, size] : llvm::enumerate(inType.getShape()))
      (int64_t(d) < axis ? outer : chunk) *= size;
    // Read only: the input's own buffer (all_reduce needs a copy to write).
    Value in = bufferization::ToBufferOp::create(
        b_, loc, MemRefType::get(inType.getShape(), inType.getElementType()),
        op.getInput(), /*read_only=*/true);
    Value out = memref::AllocOp::create(
        b_, loc, MemRefType::get(outType.getShape(), outType.getElementType()));
    Type ptr = LLVM::LLVMPointerType::get(b_.getContext());
    Type i64Type = b_.getI64Type();
    func::CallOp::create(b_, loc,
                         declare(kAllGather, {ptr, ptr, i64Type, i64Type}, {}),
                         ValueRange{pointerTo(loc, in), pointerTo(loc, out),
                                    i64(loc, outer), i64(loc, chunk)});
    op.replaceAllUsesWith(toTensor(loc, out, outType));
    op.erase();
    return success();
  }

  Value rank(Location loc) {
    Value rank =
        func::CallOp::create(b_, loc, declare(kRank, {}, {b_.getI64Type()}),
                             ValueRange{})
            .getResult(0);
    return arith::IndexCastOp::create(b_, loc, b_.getIndexType(), rank);
  }

  LogicalResult lower(shard::ProcessMultiIndexOp op) {
    if (failed(checkGrid(op, op.getAxes())))
      return failure();
    op->replaceAllUsesWith(ValueRange{rank(op.getLoc())});
    op.erase();
    return success();
  }

  LogicalResult lower(shard::AllSliceOp op) {
    if (failed(checkGrid(op, op.getGridAxes())))
      return failure();
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getSliceAxis().getSExtValue();
    SmallVector<OpFoldResult> offsets(outType.getRank(), b_.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes,
        strides(outType.getRank(), b_.getIndexAttr(1));
    for (int64_t size : outType.getShape())
      sizes.push_back(b_.getIndexAttr(size));
    Value sliceSize =
        arith::ConstantIndexOp::create(b_, loc, outType.getDimSize(axis));
    offsets[axis] =
        arith::MulIOp::create(b_, loc, rank(loc), sliceSize).getResult();
    Value slice = tensor::ExtractSliceOp::create(
        b_, loc, outType, op.getInput(), offsets, sizes, strides);
    op.replaceAllUsesWith(slice);
    op.erase();
    return success();
  }

  ModuleOp module_;
  OpBuilder b_;
};

struct ShardToRuntimePass
    : public lmc::impl::LmcShardToRuntimeBase<ShardToRuntimePass> {
  void runOnOperation() override {
    if (failed(Lowering(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
