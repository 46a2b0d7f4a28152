//===- profile.h - Per-region step timings (--profile) -------------------===//
//
// The runtime side of lmc-profile-regions: the compiled step calls
// lmc_rt_profile_begin/end (kernels.h) around every loop nest and runtime
// call; while profiling is on, each region's time and call count add up
// here, indexed by the descriptor's `profile` lines.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_PROFILE_H
#define LMC_RUNTIME_PROFILE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lmc::rt {

struct RegionTime {
  uint64_t ns = 0;    // total time inside the region
  uint64_t calls = 0; // times it ran
};

/// Starts (or continues) adding up the times of `regions` regions.
void startProfiling(size_t regions);
/// Stops adding up; the totals stay.
void stopProfiling();
/// The totals so far, by region number.
const std::vector<RegionTime> &profileTimes();

} // namespace lmc::rt

#endif // LMC_RUNTIME_PROFILE_H
