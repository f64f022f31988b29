// Scoring: RULER string_match_all, the one-prefill teacher-forced scorer against a naive
// per-answer reference, and teacher-forced vs greedy generation agreement (real model).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/answer_logprobs.h"
#include "model/model.h"
#include "tasks/niah.h"
#include "tasks/scoring.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "../test_support.h"

using namespace bosch;

namespace {

const std::string kModel = bosch::tests::stories_model();

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tok;
};
const Loaded& loaded() {
  static Loaded l{Model::load(kModel), load_tokenizer(kModel)};
  return l;
}

TaskSample custom_sample(const Tokenizer& tok, const std::string& prompt, const std::string& answer) {
  TaskSample s;
  s.family = "custom";
  tokenize_sample(tok, prompt, " " + answer, {{1, 1 + answer.size()}}, s);
  return s;
}

}  // namespace

TEST(StringMatchAll, RulerSemantics) {
  EXPECT_DOUBLE_EQ(string_match_all("The number is 1234567.", {"1234567"}), 1.0);
  EXPECT_DOUBLE_EQ(string_match_all("no idea", {"1234567"}), 0.0);
  EXPECT_DOUBLE_EQ(string_match_all("12, 34 and 99", {"12", "34", "56", "78"}), 0.5);
  EXPECT_DOUBLE_EQ(string_match_all("UUID: ABCDEF-12", {"abcdef-12"}), 1.0);  // case-insensitive
  EXPECT_DOUBLE_EQ(string_match_all("123456", {"1234567"}), 0.0);  // a prefix is not a match
  EXPECT_DOUBLE_EQ(string_match_all("anything", {}), 0.0);
  EXPECT_EQ(parse_score_mode("tf"), ScoreMode::teacher_forced);
  EXPECT_EQ(parse_score_mode("generate"), ScoreMode::generate);
  EXPECT_THROW(parse_score_mode("greedy"), Error);
}

TEST(Scoring, SingleAnswerMatchesScoreAnswer) {
  const auto& [m, tok] = loaded();
  auto plan = m->full_plan();
  for (const char* answer : {"Lily", "zebra"}) {
    auto s = custom_sample(*tok, "Once upon a time, there was a little girl named", answer);
    ASSERT_EQ(s.answers.size(), 1u);
    auto fast = score_sample(*m, plan, s);
    auto ref = score_answer(*m, plan, s.prompt_ids, s.continuation_ids);
    EXPECT_EQ(fast.exact, ref.all_argmax) << answer;
    EXPECT_NEAR(fast.mean_logprob, ref.mean_logprob, 1e-5) << answer;
  }
}

TEST(Scoring, MultiAnswerOnePrefillMatchesNaivePerAnswer) {
  const auto& [m, tok] = loaded();
  const auto& c = m->config();
  for (NiahFamily f : {NiahFamily::multivalue, NiahFamily::multiquery, NiahFamily::single_text}) {
    auto s = make_niah_sample(*tok, f, 480, 0.5, Split::test, 11, Haystack::markov(), {});
    for (const AttentionPlan& plan : {m->full_plan(), AttentionPlan::all_swa(c.n_layers, c.n_kv_heads, 16, 2)}) {
      auto fast = score_sample(*m, plan, s);
      ASSERT_EQ(fast.answers.size(), s.answers.size());
      double sum = 0;
      int right = 0;
      for (size_t i = 0; i < s.answers.size(); ++i) {
        // Naive: its own prefill of prompt + the continuation before the answer.
        std::vector<int32_t> prefix(s.prompt_ids);
        prefix.insert(prefix.end(), s.continuation_ids.begin(), s.continuation_ids.begin() + s.answers[i].begin);
        auto ref = score_answer(*m, plan, prefix, s.answers[i].ids);
        EXPECT_EQ(fast.answers[i].correct, ref.all_argmax);
        EXPECT_NEAR(fast.answers[i].mean_logprob, ref.mean_logprob, 1e-4);
        sum += ref.mean_logprob;
        right += ref.all_argmax;
      }
      EXPECT_NEAR(fast.mean_logprob, sum / s.answers.size(), 1e-4);
      EXPECT_DOUBLE_EQ(fast.score, static_cast<double>(right) / s.answers.size());
    }
  }
}

// Teacher-forced exact match and greedy generation + string_match_all agree: prompts cut from
// the model's own greedy story (the next word is right) and the same prompts with a wrong word.
TEST(Scoring, TeacherForcedAgreesWithGeneration) {
  const auto& [m, tok] = loaded();
  std::ifstream in(bosch::tests::stories_greedy());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string story = ss.str().substr(0, 400);
  std::vector<size_t> spaces;
  for (size_t i = 0; i < story.size(); ++i)
    if (story[i] == ' ') spaces.push_back(i);
  ASSERT_GT(spaces.size(), 40u);
  auto plan = m->full_plan();
  int agree = 0, positives = 0, negatives = 0, total = 0;
  for (size_t k = 8; k + 1 < spaces.size() && total < 16; k += 5) {
    std::string prompt = story.substr(0, spaces[k]);
    std::string word = story.substr(spaces[k] + 1, spaces[k + 1] - spaces[k] - 1);
    while (!word.empty() && !std::isalnum(static_cast<unsigned char>(word.back()))) word.pop_back();
    if (word.size() < 3) continue;
    for (const std::string& answer : {word, std::string("zebra")}) {
      auto s = custom_sample(*tok, prompt, answer);
      auto g = score_sample_generate(*m, *tok, plan, s, 8);
      ++total;
      agree += g.exact == (g.teacher_forced_score == 1.0);
      positives += g.exact;
      negatives += !g.exact;
      EXPECT_EQ(g.exact, g.teacher_forced_score == 1.0)
          << "prompt '..." << prompt.substr(prompt.size() - 40) << "' answer '" << answer
          << "' generated '" << g.generated << "'";
    }
  }
  EXPECT_EQ(agree, total);
  EXPECT_GE(positives, 3);
  EXPECT_GE(negatives, 3);
}

TEST(Scoring, RealTokenizerSamplesFitAndRoundTrip) {
  const auto& [m, tok] = loaded();
  for (NiahFamily f : all_niah_families())
    for (int len : {1024, 1536}) {
      auto s = make_niah_sample(*tok, f, len, 0.4, Split::calib, 3, Haystack::markov(), {});
      SCOPED_TRACE(s.family);
      EXPECT_LE(s.n_tokens(), static_cast<size_t>(len));
      EXPECT_GE(s.n_tokens() + 24, static_cast<size_t>(len));  // < one short markov sentence
      EXPECT_EQ(s.prompt_ids, tok->encode(s.prompt, true));
      for (const auto& a : s.answers) EXPECT_NE(tok->decode(a.ids).find(a.text), std::string::npos) << a.text;
    }
  // Batch scoring = per-sample scoring.
  NiahOptions o;
  o.families = {NiahFamily::passkey, NiahFamily::multikey};
  o.lengths = {600};
  o.depths = depth_grid(2);
  auto samples = generate_niah(*tok, o);
  auto batch = score_samples(*m, m->full_plan(), samples, {});
  ASSERT_EQ(batch.size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i)
    EXPECT_DOUBLE_EQ(batch[i].mean_logprob, score_sample(*m, m->full_plan(), samples[i]).mean_logprob);
}
