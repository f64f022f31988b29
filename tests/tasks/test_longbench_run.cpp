// run_longbench end to end on the tiny fixture files with stories260K (skipped when the model
// is absent), and pred.py's prompt construction (truncation, BOS) with its real tokenizer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "model/model.h"
#include "tasks/longbench.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "../test_support.h"

using namespace bosch;

namespace {

const std::string kModel = bosch::tests::stories_model();
const std::string kData = std::string(BOSCH_SOURCE_DIR) + "/tests/data/longbench/small";

}  // namespace

TEST(LongBenchRun, PromptIsTemplatePlusBosAndMiddleTruncated) {
  auto tok = load_tokenizer(kModel);
  longbench::DatasetFile f = longbench::read_dataset_file(kData + "/hotpotqa.jsonl");
  const auto& task = *f.task;
  const auto& s = f.samples[0];
  std::string text = longbench::fill_template(task.prompt, s.context, s.input);
  std::vector<int32_t> full = tok->encode(text, false);
  if (tok->adds_bos()) full.insert(full.begin(), tok->bos_id());

  auto p = longbench::build_prompt(*tok, task, s, 1 << 20, true);
  EXPECT_FALSE(p.truncated);
  EXPECT_EQ(p.ids, full);  // no chat template in stories260K: the filled template as is

  const int budget = 40;
  ASSERT_GT(int(full.size()), budget);
  auto t = longbench::build_prompt(*tok, task, s, budget, true);
  EXPECT_TRUE(t.truncated);
  // Re-tokenizing the decoded halves may merge at the seam, so allow a few tokens of slack.
  EXPECT_LE(int(t.ids.size()), budget + 3);
  EXPECT_GE(int(t.ids.size()), budget - 3);
  std::string kept = tok->decode(t.ids);
  // The start of the instruction and the final "Answer:" survive; the middle does not.
  EXPECT_NE(kept.find("Answer the question"), std::string::npos) << kept;
  EXPECT_EQ(kept.substr(kept.size() - 7), "Answer:") << kept;
  EXPECT_EQ(kept.find("shiny"), std::string::npos);
}

TEST(LongBenchRun, EndToEndOnFixturesWithStories260K) {
  auto m = Model::load(kModel);
  auto tok = load_tokenizer(kModel);
  LongBenchOptions opt;
  opt.data = {kData};
  opt.max_prompt_tokens = 256;
  opt.max_samples = 2;
  LongBenchResult r = run_longbench(*m, *tok, m->full_plan(), opt);
  ASSERT_EQ(r.datasets.size(), 5u);
  double sum = 0;
  for (const auto& d : r.datasets) {
    EXPECT_GE(d.score, 0.0) << d.dataset;
    EXPECT_LE(d.score, 100.0) << d.dataset;
    EXPECT_GE(d.n, 1);
    const auto& task = longbench::task_or_fail(d.dataset);
    for (const auto& s : d.samples) {
      EXPECT_LE(s.new_tokens, task.max_new_tokens);
      EXPECT_GT(s.prompt_tokens, 0);
      EXPECT_GE(s.score, 0.0);
      EXPECT_LE(s.score, 1.0);
      // samsum's min_length: the first new token is never a stop token.
      if (d.dataset == "samsum") {
        EXPECT_GE(s.new_tokens, 1);
      }
    }
    sum += d.score;
  }
  EXPECT_NEAR(r.average, sum / 5.0, 1e-9);
  auto j = r.to_json(true);
  EXPECT_EQ(j["datasets"].size(), 5u);
  EXPECT_FALSE(r.table().empty());
  std::printf("%s", r.table().c_str());
  if (std::getenv("LB_DUMP")) std::printf("%s\n", j.dump(1).c_str());

  // Greedy decoding is deterministic: a second run on one dataset gives the same predictions.
  opt.datasets = {"trec"};
  LongBenchResult again = run_longbench(*m, *tok, m->full_plan(), opt);
  ASSERT_EQ(again.datasets.size(), 1u);
  EXPECT_EQ(again.datasets[0].samples[0].prediction, r.datasets[1].samples[0].prediction);

  opt.datasets = {"not_a_dataset"};
  EXPECT_THROW(run_longbench(*m, *tok, m->full_plan(), opt), Error);
}
