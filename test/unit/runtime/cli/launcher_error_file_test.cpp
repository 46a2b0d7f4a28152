#include "cli/launcher_error_file.h"

#include "io/json.h"
#include "test_util.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace lmc::rt;

namespace {

// The fields torch.distributed.elastic.multiprocessing.errors reads:
// message.message and message.extraInfo.timestamp (a decimal string).
TEST(LauncherErrorFile, HoldsTheMessageAndTimestampWhereTorchrunReadsThem) {
  const std::string message =
      "all-reduce of 8 bytes failed: \"peer\"\nclosed\t\\ [comm.cpp:1]";
  JsonValue root = parseJson(launcherErrorJson(message, 1765000000),
                             JsonSyntax::Full);
  const JsonValue *outer = root.find("message");
  ASSERT_TRUE(outer && outer->isObject());
  const JsonValue *text = outer->find("message");
  ASSERT_TRUE(text && text->isString());
  EXPECT_EQ(text->string, message);
  const JsonValue *extra = outer->find("extraInfo");
  ASSERT_TRUE(extra && extra->isObject());
  const JsonValue *timestamp = extra->find("timestamp");
  ASSERT_TRUE(timestamp && timestamp->isString());
  EXPECT_EQ(timestamp->string, "1765000000");
}

TEST(LauncherErrorFile, WrittenOnlyWhereTheLauncherAsks) {
  char dir[] = "/tmp/lmc-error-file-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/error.json";
  unsetenv("TORCHELASTIC_ERROR_FILE");
  writeLauncherErrorFile("not written");
  EXPECT_FALSE(std::ifstream(path).good());
  setenv("TORCHELASTIC_ERROR_FILE", path.c_str(), 1);
  writeLauncherErrorFile("out of memory");
  unsetenv("TORCHELASTIC_ERROR_FILE");
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(parseJson(text.str(), JsonSyntax::Full)
                .find("message")
                ->find("message")
                ->string,
            "out of memory");
  std::remove(path.c_str());
  rmdir(dir);
}

// A file that cannot be written is reported, never thrown: the error being
// reported stays the one the user sees.
TEST(LauncherErrorFile, AnUnwritablePathDoesNotThrow) {
  setenv("TORCHELASTIC_ERROR_FILE", "/nonexistent-dir/error.json", 1);
  EXPECT_NO_THROW(writeLauncherErrorFile("x"));
  unsetenv("TORCHELASTIC_ERROR_FILE");
}

} // namespace
