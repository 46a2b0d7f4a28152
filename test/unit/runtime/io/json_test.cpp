#include "io/json.h"

#include "test_util.h"

using namespace lmc::rt;

namespace {

TEST(Json, ParsesNestedValues) {
  JsonValue v = parseJson(
      R"( {"a": [1, -2, 0], "b": {"c": "x\"y\\\n\u00e9\ud83d\ude00"}, "e": []} )");
  ASSERT_TRUE(v.isObject());
  const JsonValue *a = v.find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->items.size(), 3u);
  EXPECT_EQ(a->items[1].integer, -2);
  const JsonValue *c = v.find("b")->find("c");
  ASSERT_TRUE(c && c->isString());
  EXPECT_EQ(c->string, "x\"y\\\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE(v.find("e")->items.empty());
  EXPECT_EQ(v.find("zz"), nullptr);
}

TEST(Json, IntegerLimits) {
  EXPECT_EQ(parseJson("9223372036854775807").integer, INT64_MAX);
  EXPECT_EQ(parseJson("-9223372036854775808").integer, INT64_MIN);
  EXPECT_ERROR_CONTAINS(parseJson("9223372036854775808"), "out of range");
  EXPECT_ERROR_CONTAINS(parseJson("01"), "leading zeros");
}

TEST(Json, RejectsOddInput) {
  for (const char *bad :
       {"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "true", "null", "1.5",
        "1e3", "\"unterminated", "\"tab\there\"", "\"\\x\"", "\"\\ud800\"",
        "{} x", "{'a': 1}", "-", "[1 2]"}) {
    SCOPED_TRACE(bad);
    EXPECT_ERROR_CONTAINS(parseJson(bad), "invalid JSON");
  }
}

TEST(Json, RejectsDuplicateKeys) {
  EXPECT_ERROR_CONTAINS(parseJson(R"({"a": 1, "a": 2})"),
                        "duplicate key \"a\"");
}

TEST(Json, RejectsDeepNesting) {
  EXPECT_ERROR_CONTAINS(parseJson(std::string(1000, '[')), "nesting too deep");
}

TEST(Json, StringEscapingRoundTrips) {
  std::string s = "a\"b\\c\n\x01";
  std::string out;
  appendJsonString(out, s);
  EXPECT_EQ(parseJson(out).string, s);
}

} // namespace
