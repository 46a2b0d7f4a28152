//===- schedule.cpp - Learning-rate schedules ----------------------------===//

#include "model/schedule.h"

#include <algorithm>
#include <cmath>

namespace lmc::rt {

std::optional<ScheduleKind> parseScheduleKind(const std::string &name) {
  if (name == "constant")
    return ScheduleKind::Constant;
  if (name == "linear")
    return ScheduleKind::Linear;
  if (name == "cosine")
    return ScheduleKind::Cosine;
  if (name == "wsd")
    return ScheduleKind::Wsd;
  return std::nullopt;
}

const char *scheduleKindName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::Constant:
    return "constant";
  case ScheduleKind::Linear:
    return "linear";
  case ScheduleKind::Cosine:
    return "cosine";
  case ScheduleKind::Wsd:
    return "wsd";
  }
  return "?";
}

double Schedule::lrAt(int64_t t) const {
  // Linear warmup from 0: step t of the warmup uses lr * t / warmup, so the
  // last warmup step reaches the peak.
  if (warmup > 0 && t <= warmup)
    return lr * double(t) / double(warmup);
  const int64_t decayable = std::max<int64_t>(totalSteps - warmup, 0);
  auto fraction = [](int64_t done, int64_t span) {
    return span <= 0 ? 1.0 : std::clamp(double(done) / double(span), 0.0, 1.0);
  };
  switch (kind) {
  case ScheduleKind::Constant:
    return lr;
  case ScheduleKind::Linear:
    return lrMin + (lr - lrMin) * (1.0 - fraction(t - warmup, decayable));
  case ScheduleKind::Cosine:
    return lrMin + 0.5 * (lr - lrMin) *
                       (1.0 + std::cos(M_PI * fraction(t - warmup, decayable)));
  case ScheduleKind::Wsd: {
    const int64_t decay =
        std::min(decaySteps.value_or(decayable / 5), decayable);
    const int64_t decayStart = totalSteps - decay; // last stable step
    if (t <= decayStart)
      return lr;
    return lr + (lrMin - lr) * fraction(t - decayStart, decay);
  }
  }
  return lr;
}

} // namespace lmc::rt
