//===- block_cache.cpp - reuse of freed device blocks ---------------------===//

#include "memory/block_cache.h"

#include "base/error.h"

namespace lmc::rt {

BlockCache::BlockCache(std::function<void *(size_t)> allocate,
                       std::function<void(void *)> release)
    : allocate_(std::move(allocate)), release_(std::move(release)) {}

void *BlockCache::allocate(size_t size) {
  size_t rounded = (size + kGranule - 1) / kGranule * kGranule;
  if (rounded == 0)
    rounded = kGranule;
  std::lock_guard<std::mutex> lock(mutex_);
  void *block = nullptr;
  if (auto it = cached_.find(rounded); it != cached_.end() && !it->second.empty()) {
    block = it->second.back();
    it->second.pop_back();
    cachedBytes_ -= rounded;
  } else {
    block = allocate_(rounded);
    if (!block && cachedBytes_ > 0) {
      // Out of memory with blocks of other sizes kept: give them back.
      for (auto &[bytes, blocks] : cached_)
        for (void *cachedBlock : blocks)
          release_(cachedBlock);
      cached_.clear();
      cachedBytes_ = 0;
      block = allocate_(rounded);
    }
    if (!block)
      return nullptr;
  }
  live_[block] = rounded;
  liveBytes_ += rounded;
  return block;
}

void BlockCache::free(void *block) {
  if (!block)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(block);
  LMC_CHECK(it != live_.end(),
            "internal error: freeing a block the cache did not hand out");
  cached_[it->second].push_back(block);
  cachedBytes_ += it->second;
  liveBytes_ -= it->second;
  live_.erase(it);
}

void BlockCache::releaseAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[bytes, blocks] : cached_)
    for (void *block : blocks)
      release_(block);
  cached_.clear();
  cachedBytes_ = 0;
}

size_t BlockCache::cachedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cachedBytes_;
}

size_t BlockCache::liveBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return liveBytes_;
}

} // namespace lmc::rt
