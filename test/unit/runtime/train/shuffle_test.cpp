#include "train/shuffle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <unordered_set>
#include <vector>

using namespace lmc::rt;

namespace {

std::vector<uint64_t> imagesOf(uint64_t n, uint64_t key) {
  IndexPermutation permutation(n, key);
  std::vector<uint64_t> images;
  for (uint64_t i = 0; i < n; ++i)
    images.push_back(permutation(i));
  return images;
}

TEST(Shuffle, IsABijectionOfEverySize) {
  // Sizes at, below and above the Feistel domain's powers of 4.
  for (uint64_t n : {1, 2, 3, 4, 5, 16, 17, 64, 1000, 4096, 4097, 65537})
    for (uint64_t key : {0ull, 1ull, 0xdeadbeefull}) {
      std::vector<bool> seen(n);
      for (uint64_t image : imagesOf(n, key)) {
        ASSERT_LT(image, n) << "n " << n << " key " << key;
        ASSERT_FALSE(seen[image]) << "n " << n << " key " << key;
        seen[image] = true;
      }
    }
}

TEST(Shuffle, DeterministicPerKey) {
  EXPECT_EQ(imagesOf(1000, 7), imagesOf(1000, 7));
  EXPECT_NE(imagesOf(1000, 7), imagesOf(1000, 8));
  EXPECT_NE(epochKey(7, 3), epochKey(8, 3));
  EXPECT_NE(epochKey(7, 3), epochKey(7, 4));
}

// What a random permutation of [0, n) looks like: about one fixed point,
// a mean displacement |p(i) - i| of (n^2 - 1) / 3n, and no correlation
// between neighbours' images.
TEST(Shuffle, LooksLikeARandomPermutation) {
  const uint64_t n = 100000;
  std::vector<uint64_t> images = imagesOf(n, epochKey(5, 0));
  int fixed = 0;
  double displacement = 0, ascents = 0;
  for (uint64_t i = 0; i < n; ++i) {
    fixed += images[i] == i;
    displacement += std::fabs(double(images[i]) - double(i));
    if (i + 1 < n)
      ascents += images[i + 1] > images[i];
  }
  EXPECT_LT(fixed, 8);
  EXPECT_NEAR(displacement / n, (double(n) * n - 1) / (3.0 * n), 0.01 * n);
  EXPECT_NEAR(ascents / (n - 1), 0.5, 0.01);
}

TEST(Shuffle, ConstantMemoryAtAnySize) {
  // A set of 10^10 windows: images found one at a time, distinct, in range.
  const uint64_t n = 10000000000ull;
  IndexPermutation permutation(n, epochKey(7, 3));
  std::unordered_set<uint64_t> images;
  for (uint64_t i = 0; i < 100000; ++i) {
    uint64_t image = permutation(i * 99991 % n);
    ASSERT_LT(image, n);
    ASSERT_TRUE(images.insert(image).second);
  }
}

TEST(Shuffle, GoldenOrder) {
  // Pinned so the order stays identical across platforms and releases.
  // The values come from a second implementation of the documented
  // algorithm (Python, arbitrary-precision integers masked to 64 bits):
  //   mix(x): x += 0x9E3779B97F4A7C15; x = (x ^ x>>30) * 0xBF58476D1CE4E5B9;
  //           x = (x ^ x>>27) * 0x94D049BB133111EB; x ^ x>>31
  //   h = least h with 4^h >= n; rounds r = 0..5: (l, r') = (r', l ^
  //   (mix(key ^ mix(r << 32 ^ r')) & (2^h - 1))); walk while >= n;
  //   key = mix(seed ^ mix(epoch)).
  std::vector<uint64_t> golden = {4, 7, 1, 9, 3, 0, 6, 8, 2, 5};
  EXPECT_EQ(imagesOf(10, epochKey(1234, 0)), golden);
  IndexPermutation large(10000000000ull, epochKey(7, 3));
  EXPECT_EQ(large(0), 85174071u);
  EXPECT_EQ(large(1), 6593076556u);
  EXPECT_EQ(large(2), 3742828096u);
  EXPECT_EQ(large(9999999999ull), 8204711913u);
}

TEST(Shuffle, SampleOrderWrapsAndShufflesPerEpoch) {
  SampleOrder plain(5, false, 0);
  EXPECT_EQ(plain.sampleAt(0), 0);
  EXPECT_EQ(plain.sampleAt(7), 2);

  SampleOrder shuffled(5, true, 9);
  std::vector<int64_t> epoch0, epoch1;
  for (int64_t k = 0; k < 5; ++k)
    epoch0.push_back(shuffled.sampleAt(k));
  for (int64_t k = 5; k < 10; ++k)
    epoch1.push_back(shuffled.sampleAt(k));
  // The same second implementation's orders for seed 9, epochs 0 and 1.
  EXPECT_EQ(epoch0, (std::vector<int64_t>{4, 1, 0, 3, 2}));
  EXPECT_EQ(epoch1, (std::vector<int64_t>{3, 0, 1, 4, 2}));
  // Any sample is found without drawing the ones before it (a resumed
  // run), and an earlier epoch's again.
  EXPECT_EQ(SampleOrder(5, true, 9).sampleAt(8), epoch1[3]);
  EXPECT_EQ(shuffled.sampleAt(2), epoch0[2]);
}

TEST(Shuffle, EveryEpochDrawsEverySampleOnce) {
  SampleOrder order(1000, true, 3);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<bool> seen(1000);
    for (int64_t k = epoch * 1000; k < (epoch + 1) * 1000; ++k) {
      int64_t sample = order.sampleAt(k);
      ASSERT_FALSE(seen[size_t(sample)]);
      seen[size_t(sample)] = true;
    }
  }
}

} // namespace
