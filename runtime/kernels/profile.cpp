//===- profile.cpp - Per-region step timings (--profile) -----------------===//
//
// Called from the step's own thread between its loop nests (each nest is
// parallel inside, its call is not), so the totals need no atomics. While
// not profiling, a bracket costs a load and a branch.
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/profile.h"
#include "lmc/runtime/kernels.h"

#include <time.h>

namespace {

bool profiling = false;
std::vector<lmc::rt::RegionTime> totals;

int64_t nowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

} // namespace

extern "C" int64_t lmc_rt_profile_begin(void) {
  return profiling ? nowNs() : 0;
}

extern "C" void lmc_rt_profile_end(int64_t region, int64_t begin) {
  // A region the descriptor does not list (it cannot: both come from the
  // same module) is dropped rather than written out of bounds.
  if (!profiling || region < 0 || size_t(region) >= totals.size())
    return;
  lmc::rt::RegionTime &time = totals[size_t(region)];
  time.ns += uint64_t(nowNs() - begin);
  ++time.calls;
}

namespace lmc::rt {

void startProfiling(size_t regions) {
  if (totals.size() < regions)
    totals.resize(regions);
  profiling = true;
}

void stopProfiling() { profiling = false; }

const std::vector<RegionTime> &profileTimes() { return totals; }

} // namespace lmc::rt
