//===- slices.h - A tensor split in equal slices along one dimension ------===//
//
// How a tensor-parallel run lays out a split parameter: each process of the
// model group holds one of M equal slices along one dimension. Copying a
// slice out of the whole tensor and assembling the whole from gathered
// slices is plain memory layout, shared by the model state (which slices
// whole tensors at start) and the communicators (which gather them).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_SLICES_H
#define LMC_RUNTIME_SLICES_H

#include "model/descriptor.h"

#include <cstddef>
#include <cstdint>

namespace lmc::rt {

/// How a whole row-major tensor of `shape` splits along `dim` into `parts`:
/// `outer` blocks of `parts` consecutive chunks of `chunkBytes`.
struct SliceLayout {
  SliceLayout(const Shape &shape, int dim, int64_t parts, size_t elementSize);
  size_t outer = 1, chunkBytes = 0;
  int64_t parts = 1;
};

/// Copies slice `part` of `whole` into `slice`.
void copySlice(const SliceLayout &layout, const void *whole, void *slice,
               int64_t part);
/// Copies this process's part of the whole tensor `spec` names (all of it
/// when it is not split; slice `modelRank` of `modelParallel` when it is).
void copyOwnPart(const TensorSpec &spec, int64_t modelParallel,
                 int64_t modelRank, const void *whole, void *local);
/// `gathered` holds the slices one after another ([part][outer][chunk]);
/// writes the whole tensor ([outer][part][chunk]).
void assembleSlices(const SliceLayout &layout, const void *gathered,
                    void *whole);

} // namespace lmc::rt

#endif // LMC_RUNTIME_SLICES_H
