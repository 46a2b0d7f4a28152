#include "cli/config.h"

#include "test_util.h"

using namespace lmc::rt;

namespace {

TEST(Config, Defaults) {
  Config c = parseFlags({});
  EXPECT_EQ(c.steps, 100);
  EXPECT_EQ(c.logEvery, 10);
  EXPECT_FALSE(c.lr);
  EXPECT_FALSE(c.shuffle);
}

TEST(Config, ParsesEveryFlag) {
  Config c = parseFlags({"--input",
                         "x=a.npy",
                         "--input=labels=b=c.npy",
                         "--eval-input",
                         "x=e.npy",
                         "--steps",
                         "5",
                         "--lr=0.5",
                         "--log-every",
                         "2",
                         "--eval-every",
                         "3",
                         "--shuffle",
                         "--seed",
                         "18446744073709551615",
                         "--metrics",
                         "m",
                         "--save",
                         "s",
                         "--init",
                         "i",
                         "--info",
                         "--help"});
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[1].name, "labels");
  EXPECT_EQ(c.inputs[1].path, "b=c.npy"); // split at the first '='
  EXPECT_EQ(c.evalInputs[0].path, "e.npy");
  EXPECT_EQ(c.steps, 5);
  EXPECT_EQ(*c.lr, 0.5);
  EXPECT_EQ(c.logEvery, 2);
  EXPECT_EQ(c.evalEvery, 3);
  EXPECT_TRUE(c.shuffle);
  EXPECT_EQ(c.seed, UINT64_MAX);
  EXPECT_EQ(c.metricsPath, "m");
  EXPECT_EQ(c.savePath, "s");
  EXPECT_EQ(c.initPath, "i");
  EXPECT_TRUE(c.info);
  EXPECT_TRUE(c.help);
}

void expectUsageError(const std::vector<std::string> &args,
                      const std::string &needle) {
  try {
    parseFlags(args);
    ADD_FAILURE() << "no error for " << args[0];
  } catch (const UsageError &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << e.what();
  }
}

TEST(Config, Threads) {
  EXPECT_FALSE(parseFlags({}).threads.has_value());
  EXPECT_EQ(parseFlags({"--threads", "3"}).threads, 3);
  expectUsageError({"--threads", "0"}, "--threads expects an integer >= 1");
}

TEST(Config, CollectiveTimeout) {
  EXPECT_EQ(parseFlags({}).collectiveTimeout, 600);
  EXPECT_EQ(parseFlags({"--collective-timeout", "2.5"}).collectiveTimeout,
            2.5);
  EXPECT_EQ(parseFlags({"--collective-timeout", "0"}).collectiveTimeout, 0);
  expectUsageError({"--collective-timeout", "soon"}, "--collective-timeout");
}

TEST(Config, BucketMegabytes) {
  EXPECT_EQ(parseFlags({}).bucketMb, 25);
  EXPECT_EQ(parseFlags({"--bucket-mb", "0.5"}).bucketMb, 0.5);
  expectUsageError({"--bucket-mb", "-1"}, "--bucket-mb");
  expectUsageError({"--bucket-mb", "big"}, "--bucket-mb");
}

TEST(Config, ZeroStage) {
  EXPECT_EQ(parseFlags({}).zeroStage, 0);
  EXPECT_EQ(parseFlags({"--zero", "1"}).zeroStage, 1);
  EXPECT_EQ(parseFlags({"--zero=0"}).zeroStage, 0);
  expectUsageError({"--zero", "2"},
                   "--zero expects a ZeRO stage, 0 or 1, got '2'");
  expectUsageError({"--zero"}, "--zero needs a value");
}

TEST(Config, RejectsBadFlags) {
  expectUsageError({"--bogus"}, "unknown flag '--bogus'");
  expectUsageError({"-x"}, "unknown flag '-x'");
  // lmc's options name where they belong.
  expectUsageError({"--batch", "32"},
                   "unknown flag '--batch': --batch is set when the model is "
                   "compiled (lmc MODEL --batch ...), not when it trains; "
                   "--info shows what this executable was compiled with");
  expectUsageError({"--precision=bf16"}, "unknown flag '--precision': "
                                         "--precision is set when the model");
  expectUsageError({"stray"}, "unexpected argument 'stray'");
  expectUsageError({"--steps"}, "--steps needs a value");
  expectUsageError({"--steps", "ten"}, "--steps expects an integer >= 0");
  expectUsageError({"--steps", "-1"}, "--steps expects an integer >= 0");
  expectUsageError({"--steps", "99999999999999999999"}, "--steps expects");
  expectUsageError({"--log-every", "0"}, "--log-every expects an integer >= 1");
  expectUsageError({"--lr", "-1"}, "--lr expects a non-negative number");
  expectUsageError({"--lr", "nan"}, "--lr expects a non-negative number");
  expectUsageError({"--lr", "1e999"}, "--lr expects a non-negative number");
  expectUsageError({"--seed", "-3"}, "--seed expects");
  expectUsageError({"--input", "x"}, "expects NAME=FILE");
  expectUsageError({"--input", "=a.npy"}, "expects NAME=FILE");
  expectUsageError({"--input", "x="}, "expects NAME=FILE");
  expectUsageError({"--input", "x=a", "--input", "x=b"},
                   "--input given twice for 'x'");
  expectUsageError({"--shuffle=yes"}, "--shuffle takes no value");
}

TEST(Config, UsageMentionsFlags) {
  std::string usage = usageText("train");
  for (const char *flag : {"--input", "--eval-input", "--steps", "--lr",
                           "--log-every", "--eval-every", "--metrics", "--save",
                           "--init", "--info", "--shuffle", "--seed", "--zero"})
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
}

} // namespace
