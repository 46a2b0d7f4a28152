//===- shuffle.cpp - Deterministic sample order --------------------------===//

#include "train/shuffle.h"

namespace lmc::rt {

namespace {

constexpr unsigned kRounds = 6;

/// splitmix64's finalizer: a bijection of 64-bit integers whose outputs of
/// neighbouring inputs are unrelated.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace

IndexPermutation::IndexPermutation(uint64_t n, uint64_t key)
    : n_(n), key_(key) {
  while (halfBits_ < 32 && (uint64_t(1) << (2 * halfBits_)) < n)
    ++halfBits_;
}

uint64_t IndexPermutation::permuteDomain(uint64_t x) const {
  const uint64_t mask = (uint64_t(1) << halfBits_) - 1;
  uint64_t left = x >> halfBits_, right = x & mask;
  for (unsigned round = 0; round < kRounds; ++round) {
    uint64_t f = mix(key_ ^ mix((uint64_t(round) << 32) ^ right));
    uint64_t next = left ^ (f & mask);
    left = right;
    right = next;
  }
  return (left << halfBits_) | right;
}

uint64_t IndexPermutation::operator()(uint64_t index) const {
  uint64_t image = permuteDomain(index);
  while (image >= n_)
    image = permuteDomain(image);
  return image;
}

uint64_t epochKey(uint64_t seed, uint64_t epoch) {
  return mix(seed ^ mix(epoch));
}

SampleOrder::SampleOrder(int64_t numSamples, bool shuffle, uint64_t seed)
    : numSamples_(numSamples), shuffle_(shuffle), seed_(seed) {}

int64_t SampleOrder::sampleAt(int64_t k) const {
  const int64_t position = k % numSamples_;
  if (!shuffle_)
    return position;
  const uint64_t epoch = uint64_t(k / numSamples_);
  return int64_t(IndexPermutation(uint64_t(numSamples_),
                                  epochKey(seed_, epoch))(uint64_t(position)));
}

} // namespace lmc::rt
