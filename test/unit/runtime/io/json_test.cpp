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

TEST(Json, FullSyntax) {
  JsonValue v = parseJson(
      R"({"r": 8, "alpha": 16.5, "p": 0.0, "e": -2.5e-3, "E": 1E2,
          "yes": true, "no": false, "none": null, "list": [null, true]})",
      JsonSyntax::Full);
  EXPECT_TRUE(v.find("r")->isInteger());
  EXPECT_EQ(v.find("r")->numeric(), 8.0);
  EXPECT_EQ(v.find("alpha")->number, 16.5);
  EXPECT_TRUE(v.find("p")->isNumeric());
  EXPECT_EQ(v.find("p")->numeric(), 0.0);
  EXPECT_EQ(v.find("e")->number, -2.5e-3);
  EXPECT_EQ(v.find("E")->number, 100.0);
  EXPECT_TRUE(v.find("yes")->isBool() && v.find("yes")->boolean);
  EXPECT_TRUE(v.find("no")->isBool() && !v.find("no")->boolean);
  EXPECT_TRUE(v.find("none")->isNull());
  EXPECT_TRUE(v.find("list")->items[0].isNull());
  for (const char *bad :
       {"tru", "nul", "1.", ".5", "1e", "1e+", "-", "01.5", "1.5.2",
        "1e400", "-1e400", "NaN", "Infinity", "[true false]", "truex",
        "9223372036854775808", "{\"a\": falsey}"}) {
    SCOPED_TRACE(bad);
    EXPECT_ERROR_CONTAINS(parseJson(bad, JsonSyntax::Full), "invalid JSON");
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
