//===- buffer.cpp - Aligned host buffers ---------------------------------===//

#include "buffer.h"

#include "error.h"

#include <cstdlib>
#include <cstring>

namespace lmc::rt {

void AlignedBuffer::Free::operator()(void *p) const { std::free(p); }

AlignedBuffer::AlignedBuffer(size_t size) : size_(size) {
  // aligned_alloc needs a size that is a multiple of the alignment.
  size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0)
    rounded = kAlignment;
  void *p = std::aligned_alloc(kAlignment, rounded);
  LMC_CHECK(p, "out of memory allocating ", size, " bytes");
  std::memset(p, 0, rounded);
  data_.reset(p);
}

} // namespace lmc::rt
