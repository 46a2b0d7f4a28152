//===- gradient_arena.h - The parameters laid end to end as one arena -----===//
//
// The layout a step's summed gradients live in: one contiguous f32 arena
// with every parameter's gradient at a 64-byte aligned offset (as the ABI
// requires of every buffer), so that data parallelism averages them with one
// collective. ZeRO-1 cuts the same layout into one range per process.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_GRADIENT_ARENA_H
#define LMC_RUNTIME_GRADIENT_ARENA_H

#include "model/descriptor.h"

#include <cstddef>
#include <vector>

namespace lmc::rt {

/// Floats in one 64-byte line.
constexpr size_t kFloatsPerLine = 16;

/// Each parameter's gradient at a line-aligned float offset, then two
/// slots for the loss sum and the stop flag.
struct GradientArena {
  explicit GradientArena(const std::vector<const TensorSpec *> &params);
  std::vector<size_t> offsets; // parallel to params
  /// The gradients' floats (whole lines) are [0, lossSlot).
  size_t lossSlot = 0, stopSlot = 0, floats = 0;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_GRADIENT_ARENA_H
