//===- shuffle.h - Deterministic sample order ----------------------------===//
//
// Training reads sample (step * B + i) mod N, optionally through a per-epoch
// permutation. The permutation of epoch e depends only on (seed, e), is
// computed with std::mt19937_64 (fully specified by the standard) and a
// hand-written Fisher-Yates shuffle (std::shuffle and
// std::uniform_int_distribution are implementation-defined), so the order is
// identical on every platform and can be recomputed when resuming.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_SHUFFLE_H
#define LMC_RUNTIME_SHUFFLE_H

#include <cstdint>
#include <random>
#include <vector>

namespace lmc::rt {

/// Unbiased integer in [0, bound) by rejection sampling; bound > 0.
uint64_t uniformBelow(std::mt19937_64 &rng, uint64_t bound);

/// The epoch's permutation of [0, n).
std::vector<int64_t> epochPermutation(int64_t n, uint64_t seed, uint64_t epoch);

/// Maps a running sample counter to a sample index.
class SampleOrder {
public:
  SampleOrder(int64_t numSamples, bool shuffle, uint64_t seed);
  /// Sample index for the k-th sample drawn since the start of training.
  int64_t sampleAt(int64_t k);

private:
  int64_t numSamples_;
  bool shuffle_;
  uint64_t seed_;
  int64_t cachedEpoch_ = -1;
  std::vector<int64_t> permutation_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_SHUFFLE_H
