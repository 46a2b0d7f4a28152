#include "cli/metrics.h"

#include "test_util.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace lmc::rt;

namespace {

class MetricsFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_NE(mkdtemp(dir_), nullptr);
    path_ = std::string(dir_) + "/metrics.jsonl";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_);
  }
  void writeText(const std::string &text) { std::ofstream(path_) << text; }
  std::string readText() {
    std::stringstream text;
    text << std::ifstream(path_).rdbuf();
    return text.str();
  }

  char dir_[32] = "/tmp/lmc-metrics-XXXXXX";
  std::string path_;
};

// A run killed after step 3 with its last checkpoint at step 2: the resumed
// run logs step 3 again, and the file must hold each step once.
TEST_F(MetricsFileTest, ResumingDropsTheStepsAfterTheCheckpoint) {
  writeText("{\"step\":1,\"loss\":3}\n{\"step\":2,\"loss\":2}\n"
            "{\"step\":2,\"eval_loss\":2.5,\"eval_samples\":4}\n"
            "{\"step\":3,\"loss\":1}\n{\"step\":4,\"lo");
  MetricsFile metrics(path_, /*resumedAt=*/2);
  metrics.write("{\"step\":3,\"loss\":1.5}");
  metrics.close();
  EXPECT_EQ(readText(), "{\"step\":1,\"loss\":3}\n{\"step\":2,\"loss\":2}\n"
                        "{\"step\":2,\"eval_loss\":2.5,\"eval_samples\":4}\n"
                        "{\"step\":3,\"loss\":1.5}\n");
}

TEST_F(MetricsFileTest, ResumingAtTheLastLoggedStepKeepsEveryLine) {
  writeText("{\"step\":1,\"loss\":3}\n{\"step\":10,\"loss\":2}\n");
  MetricsFile metrics(path_, /*resumedAt=*/10);
  metrics.close();
  EXPECT_EQ(readText(), "{\"step\":1,\"loss\":3}\n{\"step\":10,\"loss\":2}\n");
}

TEST_F(MetricsFileTest, ANewRunStartsTheFileOver) {
  writeText("{\"step\":1,\"loss\":3}\n");
  MetricsFile metrics(path_);
  metrics.write("{\"step\":1,\"loss\":4}");
  metrics.close();
  EXPECT_EQ(readText(), "{\"step\":1,\"loss\":4}\n");
}

} // namespace
