//===- DuplicateProducers.h - Copy cheap producers to users -----*- C++ -*-===//
//
// Elementwise fusion (upstream's patterns) only moves a producer into its
// consumer when the consumer is its only user. A training step is full of
// cheap producers with several users: a scalar spread to an activation's
// shape and shared by CSE across layers, or a GELU's intermediates, read by
// the next forward op and saved for the backward pass. These functions copy
// such a producer in front of its consumers (each copy single-use, so the
// fusion patterns take it) when recomputing costs less than the memory
// traffic of materializing the producer. Each returns whether it changed
// anything.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_LOWERING_FUSEELEMENTWISE_DUPLICATEPRODUCERS_H
#define LMC_LIB_LOWERING_FUSEELEMENTWISE_DUPLICATEPRODUCERS_H

#include "mlir/IR/Operation.h"

namespace lmc {

/// Broadcasts (every input smaller than the result, a few arith ops) are
/// copied into each consumer fusion can take; the original stays for the
/// others (a matmul operand).
bool duplicateBroadcasts(mlir::Operation *root);

/// An elementwise op of a few ops is recomputed in all its consumers, so
/// that its result is never written, when every consumer is an elementwise
/// op that can fuse it (or, with `intoSums`, a sum when the op is plain
/// arithmetic) and none then reads more full-size tensors than before (the
/// op's operands replace its result among the consumer's reads).
bool duplicateIntoConsumers(mlir::Operation *root, bool intoSums);

} // namespace lmc

#endif // LMC_LIB_LOWERING_FUSEELEMENTWISE_DUPLICATEPRODUCERS_H
