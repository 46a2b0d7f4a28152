//===- shuffle.cpp - Deterministic sample order --------------------------===//

#include "train/shuffle.h"

namespace lmc::rt {

namespace {

/// splitmix64 finalizer: decorrelates the per-epoch seeds derived from
/// (seed, epoch) so neighbouring epochs get unrelated generator states.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace

uint64_t uniformBelow(std::mt19937_64 &rng, uint64_t bound) {
  // Reject the lowest (2^64 mod bound) values so every residue is equally
  // likely.
  const uint64_t threshold = (0 - bound) % bound;
  while (true) {
    uint64_t r = rng();
    if (r >= threshold)
      return r % bound;
  }
}

std::vector<int64_t> epochPermutation(int64_t n, uint64_t seed,
                                      uint64_t epoch) {
  std::vector<int64_t> perm(size_t(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i)
    perm[size_t(i)] = i;
  std::mt19937_64 rng(mix(seed ^ mix(epoch)));
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = int64_t(uniformBelow(rng, uint64_t(i) + 1));
    std::swap(perm[size_t(i)], perm[size_t(j)]);
  }
  return perm;
}

SampleOrder::SampleOrder(int64_t numSamples, bool shuffle, uint64_t seed)
    : numSamples_(numSamples), shuffle_(shuffle), seed_(seed) {}

int64_t SampleOrder::sampleAt(int64_t k) {
  const int64_t position = k % numSamples_;
  if (!shuffle_)
    return position;
  const int64_t epoch = k / numSamples_;
  if (epoch != cachedEpoch_) {
    permutation_ = epochPermutation(numSamples_, seed_, uint64_t(epoch));
    cachedEpoch_ = epoch;
  }
  return permutation_[size_t(position)];
}

} // namespace lmc::rt
