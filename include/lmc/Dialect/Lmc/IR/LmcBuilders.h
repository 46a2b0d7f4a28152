//===- LmcBuilders.h - helpers that build common lmc op sequences -*- C++ -*-===//
//
// Shared by the importers, the VJPs, loss attachment and the optimizer so that
// broadcasting and its inverse are written once.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_DIALECT_LMC_IR_LMCBUILDERS_H
#define LMC_DIALECT_LMC_IR_LMCBUILDERS_H

#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace lmc {

/// A constant tensor of `type` with every element equal to `value`.
mlir::Value buildSplat(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::RankedTensorType type, double value);

/// A scalar constant of the element type of `like`, broadcast to its shape.
mlir::Value buildSplatLike(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value like, double value);

/// Broadcasts `value` to `shape` with numpy rules (trailing dimensions
/// aligned). Returns `value` unchanged when it already has that shape.
mlir::Value buildNumpyBroadcast(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value value,
                                llvm::ArrayRef<int64_t> shape);

/// The result shape of numpy-broadcasting `lhs` and `rhs`, or failure.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Sums `value` down to `type`, undoing a broadcast that maps dimension i of
/// `type` to dimension dims[i] of `value` (the adjoint of
/// lmc.broadcast_in_dim).
mlir::Value buildUnbroadcast(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value value, mlir::RankedTensorType type,
                             llvm::ArrayRef<int64_t> dims);

/// Broadcasts a scalar tensor (rank 0) to the shape of `like`.
mlir::Value buildBroadcastScalar(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value scalar, mlir::Value like);

/// lmc.reshape, or `value` itself when it already has `shape`.
mlir::Value buildReshape(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, llvm::ArrayRef<int64_t> shape);

/// Sums over `axis` keeping it with size 1, then broadcasts back to the
/// operand's shape (used by the softmax VJPs).
mlir::Value buildSumBroadcastBack(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value value, int64_t axis);

/// lmc.cmp of two same-typed tensors; the result is an i1 tensor of their
/// shape.
mlir::Value buildCompare(mlir::OpBuilder &b, mlir::Location loc,
                         CmpPredicate predicate, mlir::Value lhs,
                         mlir::Value rhs);

/// lmc.select with the choices' type.
mlir::Value buildSelect(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value condition, mlir::Value onTrue,
                        mlir::Value onFalse);

/// Dropout of a training step, as torch.nn.functional.dropout: each element
/// of `x` is kept where lmc.random_uniform(key, stream) >= ratio (0 <=
/// ratio < 1) and scaled by 1 / (1 - ratio). Returns the result and the i1
/// mask of kept elements; callers choose the evaluation value with
/// lmc.mode_select.
std::pair<mlir::Value, mlir::Value>
buildTrainingDropout(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     double ratio, mlir::Value key, int64_t stream);

/// Batch normalization of `x` ([N, C, ...]) with per-channel ([C]) `scale`,
/// `bias`, `mean` and `variance`: `x * a + (bias - mean * a)` with
/// `a = scale / sqrt(variance + epsilon)` (inference, or an evaluation step).
mlir::Value buildBatchNormWithStatistics(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::Value x, mlir::Value scale,
                                         mlir::Value bias, mlir::Value mean,
                                         mlir::Value variance, double epsilon);

/// Batch normalization of a training step: `y` normalizes `x` with the
/// batch mean and biased variance over every dimension but 1 (gradients flow
/// through them) in a training step and with the running statistics in an
/// evaluation step (lmc.mode_select). The batch statistics are returned for
/// the caller's running-statistics update; `count` is the number of values
/// each channel's statistics average.
struct BatchNormTraining {
  mlir::Value y, mean, variance;
  int64_t count;
};
BatchNormTraining buildBatchNormTraining(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::Value x, mlir::Value scale,
                                         mlir::Value bias,
                                         mlir::Value runningMean,
                                         mlir::Value runningVariance,
                                         double epsilon);

/// The start of a single-result op's VJP: sizes `operandCotangents` to the
/// op's operands (all null) and returns the result's cotangent, or null when
/// it received none.
mlir::Value takeSingleCotangent(mlir::Operation *op,
                                mlir::ValueRange resultCotangents,
                                llvm::SmallVectorImpl<mlir::Value> &operandCotangents);

} // namespace lmc

#endif // LMC_DIALECT_LMC_IR_LMCBUILDERS_H
