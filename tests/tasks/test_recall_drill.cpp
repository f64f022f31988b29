// The dense recall drill used to train the default model: answers sit where the spans say,
// every question follows its fact, the text fits the length, and only train-split needles occur.
#include <gtest/gtest.h>

#include <regex>

#include "fake_tokenizers.h"
#include "tasks/recall_drill.h"

using namespace bosch;

TEST(RecallDrill, SpansPointAtAnswersGivenEarlierAndFitTheLength) {
  bosch::testing::ByteTokenizer tok;
  for (double echo : {0.0, 0.5}) {
    DrillOptions opt;
    opt.echo_share = echo;
    for (int len : {256, 1024}) {
      for (uint64_t seed = 0; seed < 5; ++seed) {
        TrainText t = make_recall_drill(tok, len, Split::train, seed, Haystack::markov(), opt);
        EXPECT_LE(t.n_tokens, static_cast<size_t>(len));
        EXPECT_GT(t.n_tokens + 80, static_cast<size_t>(len));  // short by less than a filler sentence
        ASSERT_FALSE(t.answer_spans.empty());
        for (auto [b, e] : t.answer_spans) {
          ASSERT_LT(b, e);
          ASSERT_LE(e, t.text.size());
          std::string value = t.text.substr(b, e - b);
          EXPECT_EQ(split_of(value), Split::train) << value;
          // The same value was stated before the question (retrievable from the context).
          EXPECT_NE(t.text.substr(0, b).find(value), std::string::npos) << value;
        }
      }
    }
  }
}

TEST(RecallDrill, EchoShareWritesQuestionsInTheFactsWording) {
  bosch::testing::ByteTokenizer tok;
  DrillOptions opt;
  opt.echo_share = 1.0;
  opt.niah_wording_share = 0.0;
  TrainText t = make_recall_drill(tok, 1024, Split::train, 3, Haystack::markov(), opt);
  EXPECT_EQ(t.text.find("? "), std::string::npos);
  opt.echo_share = 0.0;
  t = make_recall_drill(tok, 1024, Split::train, 3, Haystack::markov(), opt);
  EXPECT_NE(t.text.find("? "), std::string::npos);
}
