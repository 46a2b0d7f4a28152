//===- DataMovement.cpp - lower conversions, slicing, gather, scatter -----===//
//
// Each op becomes one linalg.generic over its result that computes the
// source position from linalg.index and reads it with tensor.extract (no
// strided subviews, so bufferization needs no generic memref copies).
// Scatter-add is a loop nest over its updates, or (for sharding, which
// sees only linalg) a reduction over the index dimensions. Random numbers are
// a hash of the key and the linear index, likewise computed per element.
//
//===----------------------------------------------------------------------===//

#include "../Common/RuntimeCalls.h"
#include "LoweringUtils.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lmc;

namespace lmc::lowering {
namespace {

Value index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value clampIndex(OpBuilder &b, Location loc, Value v, int64_t size) {
  Value lo = arith::MaxSIOp::create(b, loc, v, index(b, loc, 0));
  return arith::MinSIOp::create(b, loc, lo, index(b, loc, size - 1));
}

SmallVector<utils::IteratorType> parallel(unsigned rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// A generic over `type` with no inputs whose body yields body(indices).
Value buildIndexed(
    OpBuilder &b, Location loc, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned rank = type.getRank();
  return buildGeneric(b, loc, type, buildEmpty(b, loc, type), ValueRange{}, {},
                      b.getMultiDimIdentityMap(rank), parallel(rank),
                      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
                        SmallVector<Value> indices;
                        for (unsigned d = 0; d < rank; ++d)
                          indices.push_back(linalg::IndexOp::create(nb, nl, d));
                        return body(nb, nl, indices);
                      });
}

struct ConvertLowering : public OpConversionPattern<ConvertOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type from = op.getOperand().getType().getElementType();
    Type to = op.getType().getElementType();
    if (from == to) {
      rewriter.replaceOp(op, adaptor.getOperand());
      return success();
    }
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), adaptor.getOperand(),
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value x = a[0];
          unsigned fromWidth = from.getIntOrFloatBitWidth();
          unsigned toWidth = to.getIntOrFloatBitWidth();
          if (isa<FloatType>(from) && isa<FloatType>(to))
            return fromWidth < toWidth
                       ? arith::ExtFOp::create(b, l, to, x).getResult()
                       : arith::TruncFOp::create(b, l, to, x).getResult();
          if (isa<FloatType>(to))
            return from.isInteger(1)
                       ? arith::UIToFPOp::create(b, l, to, x).getResult()
                       : arith::SIToFPOp::create(b, l, to, x).getResult();
          if (isa<FloatType>(from))
            return arith::FPToSIOp::create(b, l, to, x);
          if (fromWidth < toWidth)
            return from.isInteger(1)
                       ? arith::ExtUIOp::create(b, l, to, x).getResult()
                       : arith::ExtSIOp::create(b, l, to, x).getResult();
          return arith::TruncIOp::create(b, l, to, x);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// lmc.concat. Without sharding, each piece is copied into its slice of the
/// result (a linalg.generic writing a tensor.extract_slice, inserted back):
/// bufferization writes the pieces in place, and elementwise fusion moves
/// each piece's producer into its copy. For sharding, one linalg.generic
/// reads every piece at each position (clamped reads, a select along the
/// axis): upstream propagation sees through it, not through slices.
struct ConcatLowering : public OpConversionPattern<ConcatOp> {
  ConcatLowering(MLIRContext *ctx, bool asSliceCopies)
      : OpConversionPattern<ConcatOp>(ctx), asSliceCopies(asSliceCopies) {}

  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t axis = op.getAxis();
    // Non-empty pieces with their offsets along the axis.
    SmallVector<std::pair<Value, int64_t>> pieces;
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(axis);
      if (size > 0)
        pieces.push_back({input, offset});
      offset += size;
    }
    RankedTensorType type = op.getType();
    if (pieces.empty() || type.getNumElements() == 0) {
      rewriter.replaceOp(op, buildEmpty(rewriter, op.getLoc(), type));
      return success();
    }
    Value result = asSliceCopies ? copyIntoSlices(rewriter, op, pieces)
                                 : gatherPieces(rewriter, op, pieces);
    rewriter.replaceOp(op, result);
    return success();
  }

  static Value copyIntoSlices(OpBuilder &b, ConcatOp op,
                              ArrayRef<std::pair<Value, int64_t>> pieces) {
    Location loc = op.getLoc();
    int64_t rank = op.getType().getRank();
    Value result = buildEmpty(b, loc, op.getType());
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    for (auto [input, start] : pieces) {
      auto pieceType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
      offsets[op.getAxis()] = b.getIndexAttr(start);
      SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
      for (int64_t size : pieceType.getShape())
        sizes.push_back(b.getIndexAttr(size));
      Value slice = tensor::ExtractSliceOp::create(b, loc, pieceType, result,
                                                   offsets, sizes, strides);
      Value copied = buildGeneric(
          b, loc, pieceType, slice, input, identity, identity, parallel,
          [](OpBuilder &, Location, ValueRange args) { return args[0]; });
      result = tensor::InsertSliceOp::create(b, loc, copied, result, offsets,
                                             sizes, strides);
    }
    return result;
  }

  static Value gatherPieces(OpBuilder &rewriter, ConcatOp op,
                            ArrayRef<std::pair<Value, int64_t>> pieces) {
    int64_t axis = op.getAxis();
    RankedTensorType type = op.getType();
    return buildIndexed(
        rewriter, op.getLoc(), type,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          // Every piece is read at a clamped position; the position along
          // the axis picks which read is kept.
          Value chosen;
          for (auto [input, start] : llvm::reverse(pieces)) {
            int64_t size =
                cast<RankedTensorType>(input.getType()).getDimSize(axis);
            SmallVector<Value> at(indices);
            at[axis] = clampIndex(
                b, l,
                arith::SubIOp::create(b, l, indices[axis], index(b, l, start)),
                size);
            Value value = tensor::ExtractOp::create(b, l, input, at);
            if (!chosen) {
              chosen = value;
              continue;
            }
            Value before =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                      indices[axis], index(b, l, start + size));
            chosen = arith::SelectOp::create(b, l, before, value, chosen);
          }
          return chosen;
        });
  }

  bool asSliceCopies;
};

/// lmc.slice. Without sharding, a slice with positive strides is a
/// tensor.extract_slice (a view after bufferization: the q/k/v pieces of a
/// fused projection are read in place, not copied). Otherwise, and for
/// sharding, one linalg.generic reads operand[start + i * stride].
struct SliceLowering : public OpConversionPattern<SliceOp> {
  SliceLowering(MLIRContext *ctx, bool asView)
      : OpConversionPattern<SliceOp>(ctx), asView(asView) {}

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value operand = adaptor.getOperand();
    ArrayRef<int64_t> start = op.getStart(), stride = op.getStride();
    if (asView && llvm::all_of(stride, [](int64_t s) { return s > 0; })) {
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (auto [d, size] : llvm::enumerate(op.getType().getShape())) {
        offsets.push_back(rewriter.getIndexAttr(start[d]));
        sizes.push_back(rewriter.getIndexAttr(size));
        strides.push_back(rewriter.getIndexAttr(stride[d]));
      }
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, op.getType(), operand, offsets, sizes, strides);
      return success();
    }
    Value result = buildIndexed(
        rewriter, op.getLoc(), op.getType(),
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          SmallVector<Value> at;
          for (auto [d, i] : llvm::enumerate(indices)) {
            Value scaled =
                arith::MulIOp::create(b, l, i, index(b, l, stride[d]));
            at.push_back(
                arith::AddIOp::create(b, l, scaled, index(b, l, start[d])));
          }
          return tensor::ExtractOp::create(b, l, operand, at);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  bool asView;
};

struct SliceGradLowering : public OpConversionPattern<SliceGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value source = adaptor.getSource();
    auto sourceType = cast<RankedTensorType>(source.getType());
    RankedTensorType type = op.getType();
    Location loc = op.getLoc();
    Type elementType = type.getElementType();
    if (sourceType.getNumElements() == 0) {
      rewriter.replaceOp(op,
                         buildFilled(rewriter, loc, type,
                                     rewriter.getFloatAttr(elementType, 0)));
      return success();
    }
    ArrayRef<int64_t> start = op.getStart(), stride = op.getStride();
    Value result = buildIndexed(
        rewriter, loc, type,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          // Position i is inside the window when (i - start) is a multiple
          // q * stride with 0 <= q < count.
          Value inside;
          SmallVector<Value> at;
          for (auto [d, i] : llvm::enumerate(indices)) {
            Value diff = arith::SubIOp::create(b, l, i, index(b, l, start[d]));
            Value s = index(b, l, stride[d]);
            Value q = arith::DivSIOp::create(b, l, diff, s);
            Value r = arith::RemSIOp::create(b, l, diff, s);
            Value c0 = index(b, l, 0);
            Value ok = arith::AndIOp::create(
                b, l,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r, c0),
                arith::AndIOp::create(
                    b, l,
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, q,
                                          c0),
                    arith::CmpIOp::create(
                        b, l, arith::CmpIPredicate::slt, q,
                        index(b, l, sourceType.getDimSize(d)))));
            inside = inside ? arith::AndIOp::create(b, l, inside, ok) : ok;
            at.push_back(clampIndex(b, l, q, sourceType.getDimSize(d)));
          }
          Value value = tensor::ExtractOp::create(b, l, source, at);
          Value zero = buildFloat(b, l, elementType, 0.0);
          if (!inside) // rank 0
            return value;
          return arith::SelectOp::create(b, l, inside, value, zero);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// An index read from an integer tensor, normalized against `size`:
/// negative values count from the end, others are clamped.
Value normalizeIndex(OpBuilder &b, Location l, Value raw, int64_t size) {
  Value i = arith::IndexCastOp::create(b, l, b.getIndexType(), raw);
  Value negative =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, index(b, l, 0));
  Value wrapped = arith::AddIOp::create(b, l, i, index(b, l, size));
  i = arith::SelectOp::create(b, l, negative, wrapped, i);
  return clampIndex(b, l, i, size);
}

/// `indices` as i64 in [0, size): a negative index counts from the end
/// once; one still outside calls lmc_rt_index_out_of_range with the
/// gather's site, which ends the run (the clamp after the call only keeps
/// the read in bounds for the compiler's sake). One check per index, not
/// per gathered element.
Value checkedIndices(OpBuilder &b, Location loc, Value indices, int64_t size) {
  auto type = cast<RankedTensorType>(indices.getType());
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  func::FuncOp callee =
      declareRuntimeFunction(module, b, "lmc_rt_index_out_of_range",
                             FunctionType::get(ctx, {i64, i64, ptr}, {}));
  std::string symbol =
      declareSiteText(b, module, loc, siteOf(loc, "Gather"), "lmc_index_site");
  auto resultType = RankedTensorType::get(type.getShape(), i64);
  return buildGeneric(
      b, loc, resultType, buildEmpty(b, loc, resultType), indices,
      b.getMultiDimIdentityMap(type.getRank()),
      b.getMultiDimIdentityMap(type.getRank()), parallel(type.getRank()),
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value raw = args[0];
        if (raw.getType() != i64)
          raw = arith::ExtSIOp::create(nb, l, i64, raw);
        Value zero = arith::ConstantIntOp::create(nb, l, i64, 0);
        Value limit = arith::ConstantIntOp::create(nb, l, i64, size);
        Value negative =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, raw, zero);
        Value i = arith::SelectOp::create(
            nb, l, negative, arith::AddIOp::create(nb, l, raw, limit), raw);
        // Unsigned: a still negative index is huge.
        Value outside =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::uge, i, limit);
        scf::IfOp::create(nb, l, outside, [&](OpBuilder &tb, Location tl) {
          Value address = LLVM::AddressOfOp::create(tb, tl, ptr, symbol);
          func::CallOp::create(tb, tl, callee, ValueRange{raw, limit, address});
          scf::YieldOp::create(tb, tl);
        });
        Value low = arith::MaxSIOp::create(nb, l, i, zero);
        return arith::MinSIOp::create(
            nb, l, low, arith::ConstantIntOp::create(nb, l, i64, size - 1));
      });
}

struct GatherLowering : public OpConversionPattern<GatherOp> {
  GatherLowering(MLIRContext *ctx, bool checkIndices)
      : OpConversionPattern<GatherOp>(ctx), checkIndices(checkIndices) {}

  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value operand = adaptor.getOperand();
    auto operandType = cast<RankedTensorType>(operand.getType());
    int64_t axis = op.getAxis();
    int64_t indexRank = op.getIndices().getType().getRank();
    unsigned rank = type.getRank();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, buildEmpty(rewriter, loc, type));
      return success();
    }
    int64_t size = operandType.getDimSize(axis);
    Value indices = adaptor.getIndices();
    if (checkIndices)
      indices = checkedIndices(rewriter, loc, indices, size);
    SmallVector<AffineExpr> indexExprs;
    for (int64_t d = 0; d < indexRank; ++d)
      indexExprs.push_back(rewriter.getAffineDimExpr(axis + d));
    AffineMap indicesMap = AffineMap::get(rank, 0, indexExprs, op.getContext());
    Value result = buildGeneric(
        rewriter, loc, type, buildEmpty(rewriter, loc, type), indices,
        indicesMap, rewriter.getMultiDimIdentityMap(rank), parallel(rank),
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < axis; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          at.push_back(checkIndices ? Value(arith::IndexCastOp::create(
                                          b, l, b.getIndexType(), args[0]))
                                    : normalizeIndex(b, l, args[0], size));
          for (int64_t d = axis + indexRank; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(b, l, d));
          return tensor::ExtractOp::create(b, l, operand, at);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  bool checkIndices;
};

} // namespace

Value buildScatterLoops(OpBuilder &b, Location loc, int64_t axis, Value updates,
                        Value indices, Value init) {
  auto updatesType = cast<RankedTensorType>(updates.getType());
  int64_t indexRank = cast<RankedTensorType>(indices.getType()).getRank();
  int64_t size = cast<RankedTensorType>(init.getType()).getDimSize(axis);
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t extent : updatesType.getShape()) {
    lbs.push_back(index(b, loc, 0));
    ubs.push_back(index(b, loc, extent));
    steps.push_back(index(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{init},
      [&](OpBuilder &nb, Location l, ValueRange ivs,
          ValueRange acc) -> scf::ValueVector {
        ValueRange indexIvs = ivs.slice(axis, indexRank);
        Value raw = tensor::ExtractOp::create(nb, l, indices, indexIvs);
        SmallVector<Value> at(ivs.take_front(axis));
        at.push_back(normalizeIndex(nb, l, raw, size));
        llvm::append_range(at, ivs.drop_front(axis + indexRank));
        Value sum = arith::AddFOp::create(
            nb, l, tensor::ExtractOp::create(nb, l, acc[0], at),
            tensor::ExtractOp::create(nb, l, updates, ivs));
        return {tensor::InsertOp::create(nb, l, sum, acc[0], at)};
      });
  return nest.results.front();
}

namespace {

/// One linalg.generic whose iteration space is the result dimensions, then
/// the index dimensions (reductions); each update is added where its index
/// equals the result position along the axis. O(result x indices), but a
/// linalg op.
Value buildScatterReduction(OpBuilder &b, Location loc, ScatterAddOp op,
                            Value updates, Value indices, Value init) {
  RankedTensorType type = op.getType();
  int64_t axis = op.getAxis();
  int64_t rank = type.getRank();
  int64_t indexRank = op.getIndices().getType().getRank();
  int64_t numDims = rank + indexRank;
  auto dim = [&](int64_t d) { return b.getAffineDimExpr(d); };
  SmallVector<AffineExpr> updateExprs, indexExprs, resultExprs;
  for (int64_t d = 0; d < axis; ++d)
    updateExprs.push_back(dim(d));
  for (int64_t d = 0; d < indexRank; ++d) {
    updateExprs.push_back(dim(rank + d));
    indexExprs.push_back(dim(rank + d));
  }
  for (int64_t d = axis + 1; d < rank; ++d)
    updateExprs.push_back(dim(d));
  for (int64_t d = 0; d < rank; ++d)
    resultExprs.push_back(dim(d));
  MLIRContext *ctx = op.getContext();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(indexRank, utils::IteratorType::reduction);
  int64_t size = type.getDimSize(axis);
  Value result =
      buildGeneric(b, loc, type, init, ValueRange{updates, indices},
                   {AffineMap::get(numDims, 0, updateExprs, ctx),
                    AffineMap::get(numDims, 0, indexExprs, ctx)},
                   AffineMap::get(numDims, 0, resultExprs, ctx), iterators,
                   [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                     Value target = normalizeIndex(nb, l, args[1], size);
                     Value here = arith::CmpIOp::create(
                         nb, l, arith::CmpIPredicate::eq, target,
                         linalg::IndexOp::create(nb, l, axis));
                     Value sum = arith::AddFOp::create(nb, l, args[2], args[0]);
                     return arith::SelectOp::create(nb, l, here, sum, args[2]);
                   });
  result.getDefiningOp()->setAttr(kScatterAddAxisAttr,
                                  b.getI64IntegerAttr(axis));
  return result;
}

/// Scatter-add as loops (the GPT benchmark's embedding gradient took a
/// quarter of its step as the reduction) or, for sharding, as the
/// reduction.
struct ScatterAddLowering : public OpConversionPattern<ScatterAddOp> {
  ScatterAddLowering(MLIRContext *ctx, bool asLoops)
      : OpConversionPattern<ScatterAddOp>(ctx), asLoops(asLoops) {}

  LogicalResult
  matchAndRewrite(ScatterAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value init = buildFilled(rewriter, loc, type,
                             rewriter.getFloatAttr(type.getElementType(), 0.0));
    Value result = init;
    if (op.getUpdates().getType().getNumElements() != 0)
      result = asLoops ? buildScatterLoops(rewriter, loc, op.getAxis(),
                                           adaptor.getUpdates(),
                                           adaptor.getIndices(), init)
                       : buildScatterReduction(rewriter, loc, op,
                                               adaptor.getUpdates(),
                                               adaptor.getIndices(), init);
    rewriter.replaceOp(op, result);
    return success();
  }

  bool asLoops;
};

/// An i64 constant with the bits of `v`.
Value i64Constant(OpBuilder &b, Location loc, uint64_t v) {
  Type i64 = b.getI64Type();
  return arith::ConstantOp::create(b, loc, i64,
                                   b.getIntegerAttr(i64, int64_t(v)));
}

/// splitmix64's finalizer on wrapping u64 arithmetic.
Value splitmix(OpBuilder &b, Location loc, Value x) {
  auto xorShift = [&](Value v, uint64_t shift) -> Value {
    return arith::XOrIOp::create(
        b, loc, v,
        arith::ShRUIOp::create(b, loc, v, i64Constant(b, loc, shift)));
  };
  x = arith::MulIOp::create(b, loc, xorShift(x, 30),
                            i64Constant(b, loc, 0xBF58476D1CE4E5B9ull));
  x = arith::MulIOp::create(b, loc, xorShift(x, 27),
                            i64Constant(b, loc, 0x94D049BB133111EBull));
  return xorShift(x, 31);
}

constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;

/// The formula of RandomUniformOp's description, one element per index.
struct RandomUniformLowering : public OpConversionPattern<RandomUniformOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RandomUniformOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type i64 = rewriter.getI64Type();
    Value key = tensor::ExtractOp::create(rewriter, loc, adaptor.getKey(),
                                          ValueRange{});
    Value base = splitmix(
        rewriter, loc,
        arith::AddIOp::create(
            rewriter, loc,
            arith::MulIOp::create(rewriter, loc, key,
                                  i64Constant(rewriter, loc, kGoldenGamma)),
            i64Constant(rewriter, loc, uint64_t(op.getStream()))));
    auto elementType = cast<FloatType>(type.getElementType());
    bool isF32 = elementType.isF32();
    Value result = buildIndexed(
        rewriter, loc, type,
        [&](OpBuilder &b, Location l, ValueRange indices) -> Value {
          Value linear = index(b, l, 0);
          for (auto [d, i] : llvm::enumerate(indices))
            linear = arith::AddIOp::create(
                b, l,
                arith::MulIOp::create(b, l, linear,
                                      index(b, l, type.getDimSize(d))),
                i);
          Value counter = arith::IndexCastOp::create(b, l, i64, linear);
          Value bits = splitmix(
              b, l,
              arith::AddIOp::create(
                  b, l, base,
                  arith::MulIOp::create(b, l, counter,
                                        i64Constant(b, l, kGoldenGamma))));
          Value top = arith::ShRUIOp::create(
              b, l, bits, i64Constant(b, l, isF32 ? 40 : 11));
          Value value = arith::UIToFPOp::create(b, l, elementType, top);
          double scale = isF32 ? 0x1p-24 : 0x1p-53;
          return arith::MulFOp::create(
              b, l, value,
              arith::ConstantOp::create(b, l, elementType,
                                        b.getFloatAttr(elementType, scale)));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A mode_select that lmc-optimizer did not resolve is in a function
/// differentiated directly (lmc-gradcheck): a training computation.
struct ModeSelectLowering : public OpConversionPattern<ModeSelectOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ModeSelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getTrain());
    return success();
  }
};

} // namespace

void populateDataMovementLoweringPatterns(RewritePatternSet &patterns,
                                          bool shardable, bool checkIndices) {
  patterns.add<ConvertLowering, SliceGradLowering, ModeSelectLowering,
               RandomUniformLowering>(patterns.getContext());
  patterns.add<GatherLowering>(patterns.getContext(), checkIndices);
  patterns.add<ScatterAddLowering, ConcatLowering, SliceLowering>(
      patterns.getContext(), !shardable);
}

} // namespace lmc::lowering
