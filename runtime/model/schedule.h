//===- schedule.h - Learning-rate schedules ------------------------------===//
//
// The `lr` hyper of step t (1-based) for a run of `totalSteps` steps, in
// double precision. docs/training.md gives the formulas.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_SCHEDULE_H
#define LMC_RUNTIME_SCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>

namespace lmc::rt {

enum class ScheduleKind { Constant, Linear, Cosine, Wsd };

/// "constant" | "linear" | "cosine" | "wsd", or nullopt.
std::optional<ScheduleKind> parseScheduleKind(const std::string &name);
const char *scheduleKindName(ScheduleKind kind);

struct Schedule {
  ScheduleKind kind = ScheduleKind::Constant;
  double lr = 0;          // peak learning rate (--lr or hparam lr)
  double lrMin = 0;       // --lr-min: floor of the decay
  int64_t warmup = 0;     // --warmup: linear ramp over steps 1..warmup
  int64_t totalSteps = 0; // --steps (the run's total, also when resuming)
  /// WSD only: length of the final decay phase (--decay-steps); nullopt
  /// means 20% of the steps after warmup, rounded down.
  std::optional<int64_t> decaySteps;

  /// The learning rate for step t >= 1.
  double lrAt(int64_t t) const;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_SCHEDULE_H
