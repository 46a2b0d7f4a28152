//===- block_cache.h - reuse of freed device blocks -----------------------===//
//
// The compiled step allocates its intermediates on every call and frees
// them before returning. On a GPU each cudaMallocManaged/cudaFree costs tens
// of microseconds and cudaFree waits for the device, so the CUDA support
// library keeps freed blocks by size and hands them out again — PyTorch's
// caching allocator in its simplest form: a step's shapes are static, so
// the same sizes come back every step and the cache stops growing after
// the first one.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_BLOCK_CACHE_H
#define LMC_RUNTIME_BLOCK_CACHE_H

#include <cstddef>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace lmc::rt {

class BlockCache {
public:
  /// `allocate` returns null when out of memory; blocks go back through
  /// `release` only when an allocation fails (then every cached block is
  /// released and it is retried) or by releaseAll().
  BlockCache(std::function<void *(size_t)> allocate,
             std::function<void(void *)> release);

  /// A block of at least `size` bytes (sizes round up to 512), or null.
  void *allocate(size_t size);
  /// Keeps `block` (from allocate(), or null) for reuse.
  void free(void *block);
  /// Returns every cached block to the allocator.
  void releaseAll();

  size_t cachedBytes() const;
  size_t liveBytes() const;

  static constexpr size_t kGranule = 512;

private:
  std::function<void *(size_t)> allocate_;
  std::function<void(void *)> release_;
  mutable std::mutex mutex_;
  std::unordered_map<void *, size_t> live_;                 // block -> size
  std::unordered_map<size_t, std::vector<void *>> cached_; // size -> blocks
  size_t cachedBytes_ = 0, liveBytes_ = 0;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_BLOCK_CACHE_H
