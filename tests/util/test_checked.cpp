// util/checked.h: the one way user files' numbers and JSON are read (issue #24).
#include <gtest/gtest.h>

#include "util/checked.h"
#include "util/error.h"
#include "../test_support.h"

using bosch::tests::error_of;

using namespace bosch;
using nlohmann::json;

namespace {

int64_t int_of(const std::string& text, int64_t lo = 0, int64_t hi = kMaxInt32) {
  return json_int(json::parse(text), "f.json", "n", lo, hi);
}

}  // namespace

TEST(Checked, ExcerptCutsLongValuesAtACharacterBoundary) {
  EXPECT_EQ(excerpt("short"), "short");
  const std::string e = excerpt(std::string(1000, 'x'));
  EXPECT_LT(e.size(), 90u);
  EXPECT_NE(e.find("(1000 bytes)"), std::string::npos) << e;
  const std::string u = excerpt(std::string(59, 'a') + "\xc3\xa9" + std::string(100, 'b'));
  EXPECT_EQ(u.substr(0, 62), std::string(59, 'a') + "...") << "no half UTF-8 character";
  EXPECT_EQ(describe_json(json::parse("[1,2,3]")), "an array of 3 values");
  EXPECT_EQ(describe_json(json(std::string(5000, 'y'))).size() < 100, true);
}

TEST(Checked, IntegersAreExactAndInRange) {
  EXPECT_EQ(int_of("7"), 7);
  EXPECT_EQ(int_of("32.0"), 32) << "an integral float is an exact integer";
  EXPECT_EQ(int_of("-3", -5, 5), -3);
  for (const char* bad : {"32.9", "4294967298", "4e97", "-1", "1e300", "\"7\"", "true", "null",
                          "[1]", "18446744073709551615", "-9.3e18"}) {
    const std::string e = error_of([&] { int_of(bad); });
    EXPECT_NE(e.find("f.json: field 'n' must be an integer in [0, 2147483647]"), std::string::npos)
        << bad << ": " << e;
  }
  EXPECT_NE(error_of([] { json_number(json::parse("\"x\""), "f.json", "r", 0, 1); }).find("'r' must be a number in [0, 1]"),
            std::string::npos);
}

TEST(Checked, DeepJsonIsRefusedBeforeParsing) {
  const std::string deep = std::string(30000, '[') + std::string(30000, ']');
  const std::string e = error_of([&] { parse_json_checked(deep, "deep.json"); });
  EXPECT_NE(e.find("deep.json: JSON nested deeper than 64 levels"), std::string::npos) << e;
  // Brackets inside strings do not count; 64 levels are fine.
  EXPECT_NO_THROW(parse_json_checked("[\"" + std::string(1000, '[') + "\\\"[\"]", "s.json"));
  EXPECT_NO_THROW(parse_json_checked(std::string(64, '[') + std::string(64, ']'), "ok.json"));
  // Out-of-range numbers and syntax errors are bosch errors naming the file.
  EXPECT_NE(error_of([] { parse_json_checked("{\"window\": 1e400}", "m.json"); }).find("m.json: not valid JSON"),
            std::string::npos);
  const std::string long_err = error_of([] { parse_json_checked("\"" + std::string(100000, 'z'), "z.json"); });
  EXPECT_LT(long_err.size(), 400u) << "the parser's message is excerpted";
}
