//===- gradient_arena.cpp - The parameters laid end to end as one arena ---===//

#include "model/gradient_arena.h"

#include "memory/buffer.h"

namespace lmc::rt {

static_assert(kFloatsPerLine * sizeof(float) == AlignedBuffer::kAlignment);

GradientArena::GradientArena(const std::vector<const TensorSpec *> &params) {
  for (const TensorSpec *param : params) {
    offsets.push_back(floats);
    const size_t elements = size_t(param->numElements());
    floats += (elements + kFloatsPerLine - 1) / kFloatsPerLine * kFloatsPerLine;
  }
  lossSlot = floats;
  stopSlot = floats + 1;
  floats += 2;
}

} // namespace lmc::rt
