// The shared primitives of util/: splitmix64 and the seed hashes (fixed functions: a change
// would change every generated sample), UTF-8 decoding with U+FFFD replacement, and the PCRE2
// wrapper's match iteration.
#include <gtest/gtest.h>

#include <vector>

#include "util/error.h"
#include "util/hash.h"
#include "util/regex.h"
#include "util/splitmix.h"
#include "util/utf8.h"

using namespace bosch;

TEST(Splitmix, ReferenceSequence) {
  // splitmix64.c (Vigna) from state 0.
  uint64_t s = 0;
  EXPECT_EQ(splitmix64(s), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64(s), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(splitmix64(s), 0x06c45d188009454full);
  EXPECT_EQ(mix64(0), 0xe220a8397b1dcdafull);  // one step from 0, state untouched
  EXPECT_EQ(unit_double(~0ull), 1.0 - 0x1.0p-53);
  EXPECT_EQ(unit_double(0), 0.0);
}

TEST(Splitmix, SeedHashesArePinned) {
  // Values of the hashes every task sample and split is derived from (before the move to util/).
  EXPECT_EQ(hash_combine(1, 2), mix64(1 ^ mix64(2 + 0x632be59bd9b4e019ull)));
  EXPECT_NE(hash_string("a"), hash_string("b"));
  EXPECT_EQ(hash_string(""), mix64(0xcbf29ce484222325ull));
}

TEST(Utf8, DecodeReplacesMaximalInvalidSubparts) {
  // As Python's bytes.decode("utf-8", "replace") and WHATWG TextDecoder.
  EXPECT_EQ(utf8::decode("\xE2\x82" "a"), U"\uFFFDa");            // truncated sequence: one
  EXPECT_EQ(utf8::decode("\xC0\xAF"), U"\uFFFD\uFFFD");           // overlong: per byte
  EXPECT_EQ(utf8::decode("\xED\xA0\x80"), U"\uFFFD\uFFFD\uFFFD");  // surrogate: per byte
  EXPECT_EQ(utf8::decode("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), U"a\u00E9\u20AC\U0001F600");
  EXPECT_EQ(utf8::encode(U"a\u00E9\u20AC\U0001F600"), "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8::encode(utf8::decode("x\xFFy")), utf8::sanitize("x\xFFy"));
}

TEST(Regex, MatchesGroupsAndEmptyMatches) {
  std::vector<std::string> groups;
  const std::string s = "a1 b22 c";
  Regex("([a-z])\\d+", "test regex").for_each_match(s, [&](const Regex::Match& m) {
    groups.push_back(s.substr(m.group_begin, m.group_end - m.group_begin));
  });
  EXPECT_EQ(groups, (std::vector<std::string>{"a", "b"}));
  // An empty pattern matches before every code point and at the end: é is one step, not two.
  int n = 0;
  Regex("", "empty").for_each_match("\xC3\xA9x", [&](const Regex::Match& m) { ++n; });
  EXPECT_EQ(n, 3);
  EXPECT_EQ(&cached_regex("\\d", "digits"), &cached_regex("\\d", "digits"));
  try {
    Regex("(", "the test's regex");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the test's regex does not compile"), std::string::npos);
  }
}
