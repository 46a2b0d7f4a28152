#include "model/schedule.h"

#include "cli/config.h"
#include "test_util.h"

#include <cmath>

using namespace lmc::rt;

namespace {

Schedule make(ScheduleKind kind, int64_t warmup, int64_t total,
              double lrMin = 0.1) {
  Schedule s;
  s.kind = kind;
  s.lr = 1.0;
  s.lrMin = lrMin;
  s.warmup = warmup;
  s.totalSteps = total;
  return s;
}

TEST(Schedule, Constant) {
  Schedule s = make(ScheduleKind::Constant, 0, 100);
  EXPECT_EQ(s.lrAt(1), 1.0);
  EXPECT_EQ(s.lrAt(100), 1.0);
}

TEST(Schedule, WarmupIsLinearFromZero) {
  Schedule s = make(ScheduleKind::Constant, 4, 100);
  EXPECT_EQ(s.lrAt(1), 0.25);
  EXPECT_EQ(s.lrAt(2), 0.5);
  EXPECT_EQ(s.lrAt(4), 1.0);
  EXPECT_EQ(s.lrAt(5), 1.0);
}

TEST(Schedule, Cosine) {
  // warmup 10, total 110: decay over steps 11..110, p = (t - 10) / 100.
  Schedule s = make(ScheduleKind::Cosine, 10, 110);
  EXPECT_EQ(s.lrAt(10), 1.0);
  EXPECT_DOUBLE_EQ(s.lrAt(60), 0.55); // midpoint: lrMin + (1-lrMin)/2
  EXPECT_DOUBLE_EQ(s.lrAt(110), 0.1); // floor at the end
  // p = 0.25: 0.1 + 0.45 * (1 + cos(pi/4)).
  EXPECT_DOUBLE_EQ(s.lrAt(35), 0.1 + 0.45 * (1 + std::sqrt(0.5)));
}

TEST(Schedule, Linear) {
  Schedule s = make(ScheduleKind::Linear, 0, 100);
  EXPECT_DOUBLE_EQ(s.lrAt(50), 0.1 + 0.9 * 0.5);
  EXPECT_DOUBLE_EQ(s.lrAt(100), 0.1);
  EXPECT_DOUBLE_EQ(s.lrAt(500), 0.1); // past the end: stays at the floor
}

TEST(Schedule, WarmupStableDecay) {
  // warmup 10, total 110, default decay = 20% of 100 = 20 steps (91..110).
  Schedule s = make(ScheduleKind::Wsd, 10, 110, 0.0);
  EXPECT_EQ(s.lrAt(5), 0.5);
  EXPECT_EQ(s.lrAt(50), 1.0);
  EXPECT_EQ(s.lrAt(90), 1.0);
  EXPECT_DOUBLE_EQ(s.lrAt(100), 0.5);
  EXPECT_DOUBLE_EQ(s.lrAt(110), 0.0);
  s.decaySteps = 50; // decay over 61..110
  EXPECT_EQ(s.lrAt(60), 1.0);
  EXPECT_DOUBLE_EQ(s.lrAt(85), 0.5);
}

TEST(Schedule, DegenerateSpans) {
  // Warmup covers the whole run: no division by zero.
  Schedule s = make(ScheduleKind::Cosine, 10, 10);
  EXPECT_EQ(s.lrAt(10), 1.0);
  Schedule one = make(ScheduleKind::Linear, 0, 1);
  EXPECT_DOUBLE_EQ(one.lrAt(1), 0.1);
}

TEST(Schedule, Flags) {
  Config c = parseFlags({"--schedule", "cosine", "--warmup", "5", "--lr-min",
                         "1e-5", "--decay-steps=7", "--clip-grad-norm", "1"});
  EXPECT_EQ(c.schedule, ScheduleKind::Cosine);
  EXPECT_EQ(c.warmup, 5);
  EXPECT_EQ(c.lrMin, 1e-5);
  EXPECT_EQ(*c.decaySteps, 7);
  EXPECT_EQ(*c.clipGradNorm, 1.0);
  EXPECT_ERROR_CONTAINS(parseFlags({"--schedule", "step"}),
                        "--schedule expects constant, linear, cosine or wsd");
  EXPECT_ERROR_CONTAINS(parseFlags({"--on-nonfinite", "ignore"}),
                        "--on-nonfinite expects stop or skip");
  EXPECT_ERROR_CONTAINS(parseFlags({"--resume"}), "need --checkpoint-dir");
  EXPECT_ERROR_CONTAINS(parseFlags({"--tokens", "a", "--input", "x=y"}),
                        "--tokens and --input cannot be combined");
  EXPECT_ERROR_CONTAINS(parseFlags({"--peak-flops", "0"}),
                        "--peak-flops expects a positive number");
}

} // namespace
