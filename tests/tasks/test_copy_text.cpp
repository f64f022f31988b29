// Copy text, the induction phase of the default model's training: every answer span is the
// tail of a random string that stood earlier in the text, whole, the strings belong to the
// train split, the text fills its length, and about a third of it is answer.
#include <gtest/gtest.h>

#include <regex>

#include "fake_tokenizers.h"
#include "tasks/copy_text.h"
#include "util/error.h"

using namespace bosch;

TEST(CopyText, DeterministicPerSeedAndSplitRespected) {
  bosch::testing::ByteTokenizer tok;
  TrainText a = make_copy_text(tok, 256, Split::train, 7, Haystack::markov());
  TrainText b = make_copy_text(tok, 256, Split::train, 7, Haystack::markov());
  TrainText c = make_copy_text(tok, 256, Split::train, 8, Haystack::markov());
  EXPECT_EQ(a.text, b.text);
  EXPECT_NE(a.text, c.text);
  TrainText t = make_copy_text(tok, 512, Split::test, 7, Haystack::markov());
  for (auto [b0, e] : t.answer_spans) EXPECT_EQ(split_of(t.text.substr(b0 - 1, e - b0 + 1)), Split::test);
  EXPECT_THROW(make_copy_text(tok, 8, Split::train, 7, Haystack::markov()), bosch::Error);
}

// Every span is a whole repeat: it starts after a space one character into a string that stood
// earlier in the text, spans do not overlap, and the text fills its length up to one piece
// (a filler sentence or string with its space, at most ~160 tokens for the markov haystack).
TEST(CopyText, SpansAreRepeatsAndTextFillsItsLength) {
  bosch::testing::ByteTokenizer tok;
  for (int length : {256, 1024}) {
    size_t answer_chars = 0, text_chars = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      TrainText t = make_copy_text(tok, length, Split::train, seed, Haystack::markov());
      SCOPED_TRACE("length " + std::to_string(length) + " seed " + std::to_string(seed));
      ASSERT_LE(t.n_tokens, static_cast<size_t>(length));
      EXPECT_EQ(t.n_tokens, tok.encode(t.text, tok.adds_bos()).size());
      EXPECT_GT(t.n_tokens + 160, static_cast<size_t>(length)) << t.text;
      ASSERT_FALSE(t.answer_spans.empty());
      size_t prev_end = 0;
      text_chars += t.text.size();
      for (auto [b, e] : t.answer_spans) {
        ASSERT_GE(b, 2u);
        ASSERT_LE(e, t.text.size());
        EXPECT_GE(b, prev_end);
        prev_end = e;
        EXPECT_EQ(t.text[b - 2], ' ');
        ASSERT_TRUE(e == t.text.size() || t.text[e] == ' ') << "span must end a word";
        std::string whole = t.text.substr(b - 1, e - b + 1);
        std::string before = " ";  // the first string of the text has no space before it
        before.append(t.text, 0, b - 1);
        EXPECT_NE(before.find(" " + whole + " "), std::string::npos)
            << "repeat '" << whole << "' has no earlier occurrence";
        answer_chars += e - b;
      }
    }
    // With the default shares about a third of the characters are answers (over 20 samples;
    // one short sample can have few, as nothing can repeat before the first strings).
    double share = static_cast<double>(answer_chars) / text_chars;
    EXPECT_GT(share, 0.2) << "length " << length;
    EXPECT_LT(share, 0.5) << "length " << length;
  }
}
