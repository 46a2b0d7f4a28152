//===- buffer.cpp - Aligned host buffers ---------------------------------===//

#include "buffer.h"

#include "error.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace lmc::rt {

void AlignedBuffer::Free::operator()(void *p) const {
  if (owns)
    std::free(p);
}

AlignedBuffer AlignedBuffer::view(void *data, size_t size) {
  LMC_CHECK(reinterpret_cast<uintptr_t>(data) % kAlignment == 0,
            "internal error: a buffer view that is not 64-byte aligned");
  AlignedBuffer buffer;
  buffer.data_ = std::unique_ptr<void, Free>(data, Free{false});
  buffer.size_ = size;
  return buffer;
}

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
