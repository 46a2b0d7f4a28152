//===- pieces.h - Fused parameters files hold whole ----------------------===//
//
// The compiler may cut a fused parameter (GPT-2's q/k/v projection) into
// one parameter per piece along dimension 0 (`join` lines, lmc-split-
// fused-projections). Files keep PyTorch's names and shapes: they hold the
// fused tensor, the pieces one after another, and its optimizer state
// `<name>.<slot>` the same way. Along dimension 0 each piece is a
// contiguous run of the fused tensor's bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_PIECES_H
#define LMC_RUNTIME_PIECES_H

#include "io/safetensors.h"
#include "memory/buffer.h"
#include "model/descriptor.h"

#include <vector>

namespace lmc::rt {

/// Adds an entry for every piece of a fused tensor `file` holds (and for
/// `<piece>.<slot>` of its `<name>.<slot>`), naming its bytes inside the
/// fused tensor, so that pieces are read like any tensor. A fused tensor
/// whose first dimension does not divide into the pieces gets none (the
/// reader then reports the piece missing).
void addPieceEntries(SafetensorsFile &file, const std::vector<Join> &joins);

/// `tensors` with the pieces of each fused tensor (and of its state)
/// replaced by the fused tensor, where its first piece was. `storage`
/// holds the joined bytes.
std::vector<TensorView> joinPieces(const std::vector<TensorView> &tensors,
                                   const std::vector<Join> &joins,
                                   std::vector<AlignedBuffer> &storage);

} // namespace lmc::rt

#endif // LMC_RUNTIME_PIECES_H
