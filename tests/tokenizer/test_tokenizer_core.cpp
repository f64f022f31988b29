// Unit tests of the tokenizer building blocks with vocabularies built in the test.
#include <gtest/gtest.h>

#include <ctime>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/byte_level_bpe.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/regex_split.h"
#include "util/utf8.h"
#include "tokenizer_test_util.h"

namespace bosch {
namespace {
using testing::mapped;

// CPU time of this thread: a complexity bound that does not depend on how loaded the machine is.
double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

const std::string kTinyCorpus =
    "the quick brown fox jumps over the lazy dog. the dog sleeps; the fox runs! "
    "aaaa aaaaaaa banana bandana 1234 12345 the theme then there these those "
    "She said, \"I'm here, they're there, we've gone.\" 你好你好世界 世界你好 😀😀 🙂";

TEST(Utf8, SanitizeReplacesMaximalSubparts) {
  EXPECT_EQ(utf8::sanitize("abc"), "abc");
  EXPECT_EQ(utf8::sanitize("a\xff" "b"), "a\xEF\xBF\xBD" "b");
  // Truncated 3-byte sequence at the end: one U+FFFD for the valid prefix E4 BD.
  EXPECT_EQ(utf8::sanitize("x\xE4\xBD"), "x\xEF\xBF\xBD");
  // Truncated sequence followed by ASCII: one U+FFFD, then the ASCII byte.
  EXPECT_EQ(utf8::sanitize("\xE4\xBD" "a"), "\xEF\xBF\xBD" "a");
  // Overlong C0 AF: two separate invalid bytes. Surrogate ED A0 80: three.
  EXPECT_EQ(utf8::sanitize("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8::sanitize("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8::sanitize("\xF4\x90\x80\x80"), std::string(4 * 3, ' ').replace(0, 12, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
  EXPECT_TRUE(utf8::is_valid("你好😀"));
  EXPECT_FALSE(utf8::is_valid("\xF0\x9F\x98"));
}

TEST(Utf8, CompletePrefixHoldsBackOnlyIncompleteTail) {
  std::string s = "a你";  // E4 BD A0
  EXPECT_EQ(utf8::complete_prefix(s), s.size());
  EXPECT_EQ(utf8::complete_prefix(s.substr(0, 2)), 1u);
  EXPECT_EQ(utf8::complete_prefix(s.substr(0, 3)), 1u);
  EXPECT_EQ(utf8::complete_prefix("\xF0\x9F\x98"), 0u);
  EXPECT_EQ(utf8::complete_prefix("a\xff"), 2u);  // invalid, not incomplete: let sanitize handle it
}

TEST(AddedTokens, LeftmostLongestAndStrip) {
  AddedTokenMatcher m({{"<a>", 10}, {"<ab>", 11}, {"<|x|>", 12, true, true}});
  auto segs = m.split("hi<ab><a>  <|x|>  end<a");
  ASSERT_EQ(segs.size(), 5u);
  EXPECT_EQ(segs[0].text, "hi");
  EXPECT_EQ(segs[1].id, 11);
  EXPECT_EQ(segs[2].id, 10);
  EXPECT_EQ(segs[3].id, 12);  // lstrip ate the two spaces before it
  EXPECT_EQ(segs[4].text, "end<a");  // rstrip ate the two spaces after it; "<a" is no token
}

TEST(RegexSplit, Gpt2PatternPieces) {
  RegexSplitter s(kGpt2SplitPattern);
  std::vector<std::string> got;
  s.split("Hello world's  123 !!x\n", [&](std::string_view p) { got.emplace_back(p); });
  std::vector<std::string> want = {"Hello", " world", "'s", " ", " 123", " !!", "x", "\n"};
  EXPECT_EQ(got, want);
}

TEST(RegexSplit, WhitespaceMeansUnicodeWhiteSpaceLikeRust) {
  RegexSplitter s(R"(\s+|\S+)");
  auto pieces = [&](const std::string& t) {
    std::vector<std::string> v;
    s.split(t, [&](std::string_view p) { v.emplace_back(p); });
    return v;
  };
  EXPECT_EQ(pieces("a\xC2\x85" "b").size(), 3u);       // U+0085 NEL is White_Space
  EXPECT_EQ(pieces("a\xE1\xA0\x8E" "b").size(), 1u);   // U+180E is not (PCRE2 alone says it is)
  EXPECT_EQ(pieces("a\xEF\xBB\xBF" "b").size(), 1u);   // U+FEFF is not (JavaScript says it is)
  EXPECT_EQ(pieces("a\xE3\x80\x80" "b").size(), 3u);   // U+3000 ideographic space is
  EXPECT_EQ(rewrite_whitespace_classes(R"([^\s\p{L}])"),
            R"([^\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\p{L}])");
}

TEST(RegexSplit, LongWhitespaceAndLetterRunsAreLinear) {
  RegexSplitter s(kQwen2SplitPattern);
  for (const std::string& text : {std::string(200000, ' ') + "x", std::string(200000, 'a'),
                                  std::string(100000, '\n') + " y"}) {
    double t0 = thread_cpu_seconds();
    size_t total = 0;
    s.split(text, [&](std::string_view p) { total += p.size(); });
    double sec = thread_cpu_seconds() - t0;
    EXPECT_EQ(total, text.size());
    EXPECT_LT(sec, 0.5);
  }
}

TEST(BpeMerge, HeapAndScanMatchNaiveGpt2Loop) {
  ByteLevelBpeSpec spec = testing::train_tiny_bpe(kTinyCorpus, 120);
  std::vector<std::pair<std::string, std::string>> raw;
  for (auto& [a, b] : spec.merges) raw.emplace_back(byte_level_to_bytes(a), byte_level_to_bytes(b));
  ByteLevelBpeTokenizer tok(spec);
  std::mt19937 rng(7);
  std::vector<std::string> words = {"the", " the", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bandanabanana",
                                    std::string(300, 'a'), "你好你好你好你好你好你好你好你好你好"};
  const std::string alphabet = "thequickbrownaens ";
  for (int i = 0; i < 300; ++i) {
    std::string w;
    int len = 1 + int(rng() % 60);  // crosses the scan/heap threshold
    for (int k = 0; k < len; ++k) w += alphabet[rng() % alphabet.size()];
    words.push_back(w);
  }
  for (const auto& w : words) {
    std::vector<int32_t> ids;
    tok.encode_piece_uncached(w, ids);
    std::vector<std::string> got;
    for (int32_t id : ids) got.push_back(tok.token_bytes(id));
    EXPECT_EQ(got, testing::naive_bpe(w, raw)) << "word: " << w;
  }
}

TEST(BpeMerge, LongSingleCharacterWordIsNotQuadratic) {
  ByteLevelBpeSpec spec = testing::train_tiny_bpe(kTinyCorpus, 120);
  ByteLevelBpeTokenizer tok(spec);
  for (const std::string& text : {std::string(100000, 'a'), std::string(100000, ' '),
                                  [] { std::string s; for (int i = 0; i < 33000; ++i) s += "你"; return s; }()}) {
    double t0 = thread_cpu_seconds();
    auto ids = tok.encode(text);
    double sec = thread_cpu_seconds() - t0;
    EXPECT_EQ(tok.decode(ids), text);
    EXPECT_LT(sec, 0.5) << "100 KB without spaces took " << sec << " s";
  }
}

TEST(ByteLevelBpe, RoundTripRandomUtf8AndInvalidBytes) {
  ByteLevelBpeSpec spec = testing::train_tiny_bpe(kTinyCorpus, 200);
  spec.added.push_back({"<|end|>", int32_t(spec.vocab.size())});
  ByteLevelBpeTokenizer tok(spec);
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    std::string s = testing::random_utf8(rng, int(rng() % 80));
    if (i % 10 == 0) s += "<|end|>" + testing::random_utf8(rng, 5);
    EXPECT_EQ(tok.decode(tok.encode(s)), s);
  }
  // Invalid UTF-8 is encoded as its U+FFFD replacement (what the JavaScript reference sees).
  EXPECT_EQ(tok.decode(tok.encode("ok\xff\xE4\xBD" "end")), "ok\xEF\xBF\xBD\xEF\xBF\xBD" "end");
  auto ids = tok.encode("x<|end|>y");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[1], int32_t(spec.vocab.size()));
}

TEST(ByteLevelBpe, IgnoreMergesTakesWholeVocabEntries) {
  ByteLevelBpeSpec spec = testing::train_tiny_bpe("ab ab ab", 1);  // merge a+b
  spec.vocab.push_back(mapped("abc"));                               // reachable only as a whole
  spec.ignore_merges = true;
  ByteLevelBpeTokenizer tok(spec);
  EXPECT_EQ(tok.encode("abc"), std::vector<int32_t>{int32_t(spec.vocab.size()) - 1});
  spec.ignore_merges = false;
  ByteLevelBpeTokenizer tok2(spec);
  EXPECT_EQ(tok2.encode("abc").size(), 2u);
}

TEST(StreamDecoder, HoldsPartialUtf8) {
  ByteLevelBpeSpec spec = testing::train_tiny_bpe("x", 0);
  ByteLevelBpeTokenizer tok(spec);
  std::string text = "a😀b";
  StreamDecoder dec(tok);
  std::vector<std::string> outs;
  for (unsigned char c : text) outs.push_back(dec.push(tok.byte_id(c)));
  EXPECT_EQ(outs[0], "a");
  EXPECT_EQ(outs[1], "");
  EXPECT_EQ(outs[2], "");
  EXPECT_EQ(outs[3], "");
  EXPECT_EQ(outs[4], "😀");
  EXPECT_EQ(outs[5], "b");
  EXPECT_EQ(dec.flush(), "");
  StreamDecoder d2(tok);
  EXPECT_EQ(d2.push(tok.byte_id(0xF0)), "");
  EXPECT_EQ(d2.push(tok.byte_id('z')), "\xEF\xBF\xBDz");  // broken sequence -> U+FFFD
  EXPECT_EQ(d2.push(tok.byte_id(0xE4)), "");
  EXPECT_EQ(d2.flush(), "\xEF\xBF\xBD");
}

TEST(Normalizer, NfcComposesWhenBuiltWithIcu) {
  if (!Normalizer::has_icu()) GTEST_SKIP() << "SKIPPED LOUDLY: built without ICU (BOSCH_WITH_ICU); NFC is identity";
  EXPECT_EQ(nfc("e\xCC\x81"), "\xC3\xA9");       // e + combining acute -> é
  EXPECT_EQ(nfc("\xEF\xA4\x80"), "\xE8\xB1\x88");  // U+F900 compatibility ideograph -> U+8C48
  EXPECT_EQ(nfc("plain"), "plain");
}

class FakeTemplateTokenizer : public ByteLevelBpeTokenizer {
 public:
  FakeTemplateTokenizer(ByteLevelBpeSpec s) : ByteLevelBpeTokenizer(std::move(s)) {}
};

TEST(ChatTemplate, FamiliesFromTemplateText) {
  auto make = [](const std::string& tmpl) {
    ByteLevelBpeSpec spec = testing::train_tiny_bpe("x", 0);
    spec.chat_template = tmpl;
    return FakeTemplateTokenizer(spec).apply_chat_template("Hi there");
  };
  EXPECT_EQ(make("{{'<|im_start|>' + role}} {% if enable_thinking is defined %}"),
            "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(make("{{'<|im_start|>'}}"), "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(make("{{ '<|start_header_id|>' + message['role'] }}"),
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(make("{% something else %}"), "Hi there");
  EXPECT_EQ(make(""), "Hi there");
}

}  // namespace
}  // namespace bosch
