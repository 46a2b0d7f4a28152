#include "cli/profile_report.h"

#include "test_util.h"

using namespace lmc::rt;

namespace {

// Two steps of 10 ms each: regions of 6, 2 and 1 ms per step (one of them
// in two layers), one region that never ran (another entry point's).
const std::vector<ProfileRegion> kRegions = {
    {"train_step", "matmul_f32", "/blocks.0/fc/MatMul"},
    {"train_step", "loop", "/blocks.0/Add"},
    {"train_step", "loop", "/blocks.1/Add"},
    {"eval_step", "loop", "/blocks.0/Add"},
};
const std::vector<RegionTime> kTimes = {
    {12000000, 2}, {2000000, 2}, {4000000, 2}, {0, 0}};
const ProfiledSteps kSteps{2, 3, 20000000};

TEST(ProfileReport, RowsByTimePerStep) {
  std::string report = formatProfile(kRegions, kTimes, kSteps);
  EXPECT_NE(report.find("profile: steps 2-3 (2 timed), 10.000 ms per step"),
            std::string::npos)
      << report;
  size_t matmul = report.find("6.000   60.0%       1  matmul_f32");
  size_t add1 = report.find("2.000   20.0%       1  loop");
  size_t add0 = report.find("1.000   10.0%       1  loop");
  ASSERT_NE(matmul, std::string::npos) << report;
  ASSERT_NE(add1, std::string::npos) << report;
  ASSERT_NE(add0, std::string::npos) << report;
  EXPECT_LT(matmul, add1);
  EXPECT_LT(add1, add0);
  // The region no step ran is in no table.
  EXPECT_EQ(report.find("eval_step"), std::string::npos) << report;
}

TEST(ProfileReport, FoldsLayersAndSumsKinds) {
  std::string report = formatProfile(kRegions, kTimes, kSteps);
  size_t byNode = report.find("by node");
  ASSERT_NE(byNode, std::string::npos);
  EXPECT_NE(report.find("3.000   30.0%       2  loop        train_step  "
                        "/blocks.*/Add",
                        byNode),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("by kind: matmul_f32 6.000 ms (60.0%), loop 3.000 ms "
                        "(30.0%), outside the regions 1.000 ms (10.0%)"),
            std::string::npos)
      << report;
}

TEST(ProfileReport, KeepsTheSlowestAndSumsTheRest) {
  std::string report = formatProfile(kRegions, kTimes, kSteps, /*rows=*/1);
  EXPECT_NE(report.find("3.000   30.0%  (the other 2 regions)"),
            std::string::npos)
      << report;
}

TEST(ProfileReport, NothingTimed) {
  EXPECT_EQ(formatProfile(kRegions, kTimes, ProfiledSteps{}),
            "profile: no step was timed\n");
}

} // namespace
