//===- buffer.cpp - Aligned host buffers ---------------------------------===//

#include "memory/buffer.h"

#include "base/error.h"
#include "memory/device_hooks.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace lmc::rt {

void AlignedBuffer::Free::operator()(void *p) const {
  if (!owns)
    return;
  if (lmc_rt_device_free)
    lmc_rt_device_free(p);
  else
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
  // With a device, every buffer is reachable by its kernels (managed
  // memory, zeroed and aligned by the device library).
  void *p = lmc_rt_device_alloc ? lmc_rt_device_alloc(rounded)
                                : std::aligned_alloc(kAlignment, rounded);
  LMC_CHECK(p, "out of memory allocating ", size, " bytes");
  if (!lmc_rt_device_alloc)
    std::memset(p, 0, rounded);
  data_.reset(p);
}

} // namespace lmc::rt
