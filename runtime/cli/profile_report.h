//===- profile_report.h - The --profile table ----------------------------===//
#ifndef LMC_RUNTIME_PROFILE_REPORT_H
#define LMC_RUNTIME_PROFILE_REPORT_H

#include "lmc/runtime/profile.h"
#include "model/descriptor.h"

#include <string>
#include <vector>

namespace lmc::rt {

/// What the step loop measured while profiling.
struct ProfiledSteps {
  int64_t first = 0, last = 0; // the steps profiled, inclusive
  uint64_t ns = 0;             // their wall time, step calls only
};

/// The --profile report: per step, the regions that took the most time
/// (at most `rows`, and the rest summed), each with its kind, calling
/// function and label (the descriptor's `profile` lines), then the time by
/// kind and the time outside every region (glue, copies in the step
/// function, data loading is excluded).
std::string formatProfile(const std::vector<ProfileRegion> &regions,
                          const std::vector<RegionTime> &times,
                          const ProfiledSteps &steps, size_t rows = 30);

} // namespace lmc::rt

#endif // LMC_RUNTIME_PROFILE_REPORT_H
