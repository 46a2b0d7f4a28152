//===- buffer.cpp - Aligned host buffers ---------------------------------===//

#include "memory/buffer.h"

#include "base/error.h"
#include "memory/device_hooks.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace lmc::rt {

namespace {

/// Buffers this large (a huge page) get an anonymous mapping of their own.
constexpr size_t kMapAtLeast = size_t(2) << 20;

} // namespace

void AlignedBuffer::Free::operator()(void *p) const {
  if (!owns)
    return;
  if (mappedBytes)
    ::munmap(p, mappedBytes);
  else if (lmc_rt_device_free)
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
  if (!lmc_rt_device_alloc && rounded >= kMapAtLeast) {
    // Parameters, their next values and the optimizer's moments: a mapping
    // of their own is zero without being written, so its pages are touched
    // only when a step writes them (GPT-2's startup zeroed 3 GB it would
    // overwrite anyway), and may be huge pages.
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    const size_t mapped = (rounded + page - 1) / page * page;
    void *p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    LMC_CHECK(p != MAP_FAILED, "out of memory allocating ", size, " bytes");
    ::madvise(p, mapped, MADV_HUGEPAGE); // advice; fine if refused
    data_ = std::unique_ptr<void, Free>(p, Free{true, mapped});
    return;
  }
  void *p = lmc_rt_device_alloc ? lmc_rt_device_alloc(rounded)
                                : std::aligned_alloc(kAlignment, rounded);
  LMC_CHECK(p, "out of memory allocating ", size, " bytes");
  if (!lmc_rt_device_alloc)
    std::memset(p, 0, rounded);
  data_.reset(p);
}

} // namespace lmc::rt
