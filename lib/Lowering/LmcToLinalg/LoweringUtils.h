//===- LoweringUtils.h - linalg building blocks for lmc lowering -*- C++
//-*-===//

#ifndef LMC_LIB_LOWERING_LMCTOLINALG_LOWERINGUTILS_H
#define LMC_LIB_LOWERING_LMCTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace lmc::lowering {

using BodyBuilder = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A linalg.generic over the iteration space `shape` with one result of
/// `resultType` (indexed by `resultMap`) and inputs indexed by `inputMaps`.
/// The body receives the input scalars followed by the current output
/// scalar and returns the value to yield. With reduction iterators, a
/// yielded `output + x` is marked reassociable (a vectorized sum).
mlir::Value buildGeneric(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType resultType, mlir::Value init,
                         mlir::ValueRange inputs,
                         llvm::ArrayRef<mlir::AffineMap> inputMaps,
                         mlir::AffineMap resultMap,
                         llvm::ArrayRef<mlir::utils::IteratorType> iterators,
                         BodyBuilder body);

/// An elementwise linalg.generic: all operands have `resultType`'s shape.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType,
                             mlir::ValueRange inputs, BodyBuilder body);

/// tensor.empty of `type`.
mlir::Value buildEmpty(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::RankedTensorType type);

/// tensor.empty of `type` filled with `value`.
mlir::Value buildFilled(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type, mlir::TypedAttr value);

/// A scalar arith.constant of float type `type`.
mlir::Value buildFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                       double value);

/// Reshapes a static tensor through its flat form with
/// tensor.collapse_shape / tensor.expand_shape.
mlir::Value buildStaticReshape(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value value,
                               mlir::RankedTensorType resultType);

/// Reduces `value` over `axis` with `combine`, starting from `initValue`;
/// the result drops that axis.
mlir::Value buildReduceAlong(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, int64_t axis,
    mlir::TypedAttr initValue,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value, mlir::Value)>
        combine);

/// Marks the linalg.generic form of a scatter-add (its axis), which
/// lmc-scatter-adds-to-loops turns into loops after partitioning.
inline constexpr llvm::StringLiteral kScatterAddAxisAttr =
    "lmc.scatter_add_axis";

/// A loop nest over `updates` (outer dims, index dims, inner dims) that
/// adds each update into the row of `init` (zeros) its index names along
/// `axis`, carried through the loops: O(updates) work. Bufferization
/// updates the result in place.
mlir::Value buildScatterLoops(mlir::OpBuilder &b, mlir::Location loc,
                              int64_t axis, mlir::Value updates,
                              mlir::Value indices, mlir::Value init);

/// Reductions, integer running sums, matmuls and softmaxes; matmuls with
/// several batch dimensions keep them apart when `shardable`.
void populateReductionLoweringPatterns(mlir::RewritePatternSet &patterns,
                                       bool shardable);
/// lmc.convert, concat, slice, slice_grad, gather, scatter_add (scatter-add,
/// concat and slice as single linalg.generics when `shardable`, else as
/// loops over the updates, copies into slices and views). A gather's
/// indices outside [-size, size) are clamped, or with `checkIndices` end
/// the run through lmc_rt_index_out_of_range.
void populateDataMovementLoweringPatterns(mlir::RewritePatternSet &patterns,
                                          bool shardable, bool checkIndices);
/// Where an op came from, for a run-time check's message: "KIND 'node'"
/// for an ONNX node, "file:line:col: kind" for a DSL position, else "kind".
std::string siteOf(mlir::Location loc, llvm::StringRef kind);
/// `site` as a NUL-terminated constant global of `module` (a fresh symbol
/// starting with `prefix`); returns the symbol.
std::string declareSiteText(mlir::OpBuilder &b, mlir::ModuleOp module,
                            mlir::Location loc, std::string site,
                            llvm::StringRef prefix);
/// Integer lmc.div: truncating, `min / -1` wrapping; a zero divisor ends
/// the run through lmc_rt_integer_division_by_zero with `checkDivisors`
/// (CPU steps), else gives 0 (GPU kernels cannot call the host).
void populateIntegerDivisionPatterns(mlir::RewritePatternSet &patterns,
                                     bool checkDivisors);
/// lmc.conv, conv_input_grad, conv_weight_grad, max_pool, max_pool_grad.
void populateConvolutionLoweringPatterns(mlir::RewritePatternSet &patterns);

} // namespace lmc::lowering

#endif // LMC_LIB_LOWERING_LMCTOLINALG_LOWERINGUTILS_H
