//===- slices.cpp - A tensor split in equal slices along one dimension ----===//

#include "model/slices.h"

#include <cstring>

namespace lmc::rt {

SliceLayout::SliceLayout(const Shape &shape, int dim, int64_t parts,
                         size_t elementSize)
    : parts(parts) {
  size_t inner = elementSize;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (int(d) < dim)
      outer *= size_t(shape[d]);
    else if (int(d) > dim)
      inner *= size_t(shape[d]);
  }
  chunkBytes = size_t(shape[size_t(dim)] / parts) * inner;
}

void copySlice(const SliceLayout &layout, const void *whole, void *slice,
               int64_t part) {
  auto *from = static_cast<const unsigned char *>(whole);
  auto *to = static_cast<unsigned char *>(slice);
  for (size_t o = 0; o < layout.outer; ++o)
    std::memcpy(to + o * layout.chunkBytes,
                from + (o * size_t(layout.parts) + size_t(part)) *
                           layout.chunkBytes,
                layout.chunkBytes);
}

void copyOwnPart(const TensorSpec &spec, int64_t modelParallel,
                 int64_t modelRank, const void *whole, void *local) {
  if (spec.splitDim < 0)
    std::memcpy(local, whole, spec.byteSize());
  else
    copySlice(SliceLayout(wholeShape(spec, modelParallel), spec.splitDim,
                          modelParallel, dtypeSize(spec.dtype)),
              whole, local, modelRank);
}

void assembleSlices(const SliceLayout &layout, const void *gathered,
                    void *whole) {
  auto *from = static_cast<const unsigned char *>(gathered);
  auto *to = static_cast<unsigned char *>(whole);
  const size_t sliceBytes = layout.outer * layout.chunkBytes;
  for (int64_t part = 0; part < layout.parts; ++part)
    for (size_t o = 0; o < layout.outer; ++o)
      std::memcpy(to + (o * size_t(layout.parts) + size_t(part)) *
                           layout.chunkBytes,
                  from + size_t(part) * sliceBytes + o * layout.chunkBytes,
                  layout.chunkBytes);
}

} // namespace lmc::rt
