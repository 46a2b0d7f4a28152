#include "train/driver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace lmc::rt;

namespace {

const char *kDescriptor = "lmc-model 1\nloss mse\noptimizer sgd\n"
                          "hparam lr 0.1\nflops 0\n"
                          "train arg param w f32 0\n"
                          "train arg input x f32 1 2\n"
                          "train result param w f32 0\n"
                          "train result loss loss f32 0\n"
                          "init w 0 4\nend\n";
const unsigned char kWeights[4] = {0, 0, 0, 0};

void noStep(void **) {}

int run(std::vector<std::string> args, const char *descriptor = kDescriptor) {
  std::vector<char *> argv;
  static std::string program = "train";
  argv.push_back(program.data());
  for (std::string &a : args)
    argv.push_back(a.data());
  CompiledModel model{descriptor, kWeights, sizeof kWeights, noStep, noStep};
  return runTrainingMain(int(argv.size()), argv.data(), model);
}

TEST(Driver, ExitCodes) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(run({"--help"}), 0);
  EXPECT_EQ(run({"--info"}), 0);
  EXPECT_EQ(run({"--bogus"}), 2);
  EXPECT_EQ(run({"--steps", "x"}), 2);
  EXPECT_EQ(run({}), 1); // missing --input
  EXPECT_EQ(run({"--info"}, "lmc-model 9\n"), 1);
  std::string out = testing::internal::GetCapturedStdout();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("usage: train"), std::string::npos);
  EXPECT_NE(out.find("total parameters: 1"), std::string::npos);
  EXPECT_NE(err.find("error: unknown flag '--bogus'\nrun 'train --help'"),
            std::string::npos);
  EXPECT_NE(err.find("error: missing --input x=FILE.npy"), std::string::npos);
  EXPECT_NE(err.find("error: model descriptor line 1: unsupported descriptor "
                     "version"),
            std::string::npos);
}

} // namespace
