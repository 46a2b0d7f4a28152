//===- SplitMix64.h - A seeded stream the same on every machine -*- C++ -*-===//
//
// splitmix64 (Steele et al. 2014), written out so that the values do not
// depend on the C++ library: the compile-time initial values of the DSL's
// parameters and of lmc-lora's adapters. lmc.random_uniform mixes the same
// way at run time (docs/dialect.md).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_SUPPORT_SPLITMIX64_H
#define LMC_SUPPORT_SPLITMIX64_H

#include <cstdint>

namespace lmc {

struct SplitMix64 {
  uint64_t state;

  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};

} // namespace lmc

#endif // LMC_SUPPORT_SPLITMIX64_H
