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
