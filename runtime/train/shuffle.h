//===- shuffle.h - Deterministic sample order ----------------------------===//
//
// Training reads sample (step * B + i) mod N, optionally through a per-epoch
// permutation. The permutation of epoch e depends only on (seed, e) and is
// computed per index in constant memory (IndexPermutation), from integer
// arithmetic the C++ standard fully specifies: the order is identical on
// every platform, a set of 10^8 token windows needs no table of them, and
// a resumed run finds its place without replaying the epoch.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_SHUFFLE_H
#define LMC_RUNTIME_SHUFFLE_H

#include <cstdint>

namespace lmc::rt {

/// What checkpoints record as the order --shuffle draws samples in
/// (`lmc.shuffle_order`), and what a checkpoint without the key was drawn
/// in (earlier versions: a Fisher-Yates shuffle driven by mt19937_64, whose
/// table of N indices a set of 10^8 windows could not afford).
inline constexpr const char *kShuffleOrder = "feistel6-splitmix64";
inline constexpr const char *kFisherYatesOrder = "fisher-yates-mt19937_64";

/// A permutation of [0, n) chosen by `key`, one index at a time: a balanced
/// Feistel network of 6 rounds on the 2h-bit integers (the smallest such
/// domain holding n, so at most 4n of them), each round's function
/// splitmix64 of (key, round, right half), cycle-walked into [0, n): an
/// image at or above n is permuted again until it falls below n. The
/// network is a bijection of its domain, and walking each of its cycles in
/// order keeps one of [0, n); a walk takes fewer than 4 steps on average.
class IndexPermutation {
public:
  IndexPermutation(uint64_t n, uint64_t key);
  /// The image of `index` < n.
  uint64_t operator()(uint64_t index) const;

private:
  uint64_t permuteDomain(uint64_t x) const;

  uint64_t n_, key_;
  unsigned halfBits_ = 0;
};

/// The key of epoch `epoch`'s permutation under --seed `seed`.
uint64_t epochKey(uint64_t seed, uint64_t epoch);

/// Maps a running sample counter to a sample index.
class SampleOrder {
public:
  SampleOrder(int64_t numSamples, bool shuffle, uint64_t seed);
  /// Sample index for the k-th sample drawn since the start of training.
  int64_t sampleAt(int64_t k) const;

private:
  int64_t numSamples_;
  bool shuffle_;
  uint64_t seed_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_SHUFFLE_H
