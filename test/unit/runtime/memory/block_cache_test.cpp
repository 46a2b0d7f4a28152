#include "memory/block_cache.h"

#include "test_util.h"

#include <cstdlib>
#include <set>

using namespace lmc::rt;

namespace {

/// An allocator over malloc that counts its calls and can be made to fail
/// above a byte budget.
struct CountingAllocator {
  size_t allocations = 0, releases = 0, inUse = 0, budget = SIZE_MAX;
  std::unordered_map<void *, size_t> sizes;

  BlockCache cache() {
    return BlockCache(
        [this](size_t size) -> void * {
          if (inUse + size > budget)
            return nullptr;
          ++allocations;
          inUse += size;
          void *p = std::malloc(size);
          sizes[p] = size;
          return p;
        },
        [this](void *p) {
          ++releases;
          inUse -= sizes.at(p);
          sizes.erase(p);
          std::free(p);
        });
  }
};

TEST(BlockCache, ASecondStepReusesTheFirstStepsBlocks) {
  CountingAllocator counting;
  BlockCache cache = counting.cache();
  std::vector<size_t> step = {4096, 100, 4096, 65536, 1};
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::vector<void *> blocks;
    for (size_t size : step)
      blocks.push_back(cache.allocate(size));
    std::set<void *> distinct(blocks.begin(), blocks.end());
    EXPECT_EQ(distinct.size(), blocks.size()); // live blocks never alias
    for (void *block : blocks)
      cache.free(block);
  }
  // Only the first step reached the allocator; 100 and 1 round to 512.
  EXPECT_EQ(counting.allocations, 5u);
  EXPECT_EQ(counting.releases, 0u);
  EXPECT_EQ(cache.liveBytes(), 0u);
  EXPECT_EQ(cache.cachedBytes(), 2 * 4096u + 65536u + 2 * 512u);
  cache.releaseAll();
  EXPECT_EQ(counting.releases, 5u);
  EXPECT_EQ(counting.inUse, 0u);
}

TEST(BlockCache, OutOfMemoryReleasesCachedBlocksAndRetries) {
  CountingAllocator counting;
  counting.budget = 8192;
  BlockCache cache = counting.cache();
  cache.free(cache.allocate(4096));
  cache.free(cache.allocate(2048));
  // 6144 bytes are cached; 8192 more fit only once they are released.
  void *big = cache.allocate(8192);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(counting.releases, 2u);
  EXPECT_EQ(cache.cachedBytes(), 0u);
  // Beyond the budget even with nothing cached: null, not a crash.
  EXPECT_EQ(cache.allocate(512), nullptr);
  cache.free(big);
  cache.releaseAll();
  EXPECT_EQ(counting.inUse, 0u);
}

TEST(BlockCache, FreeingAForeignBlockIsAnInternalError) {
  CountingAllocator counting;
  BlockCache cache = counting.cache();
  int local = 0;
  EXPECT_THROW(cache.free(&local), Error);
  cache.free(nullptr); // as free(NULL)
}

} // namespace
