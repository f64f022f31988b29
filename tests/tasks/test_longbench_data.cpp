// LongBench reader (fixtures under tests/data/longbench/), the dataset table, template filling,
// middle truncation and the per-dataset aggregation (eval.py / scorer_e).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tasks/longbench_data.h"
#include "tasks/longbench_prompts.h"
#include "tasks/longbench_result.h"
#include "util/error.h"

using namespace bosch::longbench;

namespace {

const std::string kDir = std::string(BOSCH_SOURCE_DIR) + "/tests/data/longbench/";

// The message of the Error thrown by read_dataset_file(path); fails the test when none is.
std::string read_error(const std::string& name) {
  try {
    read_dataset_file(kDir + "bad/" + name);
  } catch (const bosch::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << name << " was accepted";
  return "";
}

}  // namespace

TEST(LongBenchTasks, TableMatchesOfficialConfig) {
  ASSERT_EQ(all_tasks().size(), 21u);
  // config/dataset2maxlen.json
  const std::map<std::string, int> maxlen = {
      {"narrativeqa", 128}, {"qasper", 128}, {"multifieldqa_en", 64}, {"multifieldqa_zh", 64},
      {"hotpotqa", 32}, {"2wikimqa", 32}, {"musique", 32}, {"dureader", 128}, {"gov_report", 512},
      {"qmsum", 512}, {"multi_news", 512}, {"vcsum", 512}, {"trec", 64}, {"triviaqa", 32},
      {"samsum", 128}, {"lsht", 64}, {"passage_count", 32}, {"passage_retrieval_en", 32},
      {"passage_retrieval_zh", 32}, {"lcc", 64}, {"repobench-p", 64}};
  int no_chat = 0, first_line = 0, e = 0;
  for (const auto& t : all_tasks()) {
    ASSERT_TRUE(maxlen.count(t.name)) << t.name;
    EXPECT_EQ(t.max_new_tokens, maxlen.at(t.name)) << t.name;
    EXPECT_NE(std::string(t.prompt).find("{context}"), std::string::npos) << t.name;
    no_chat += !t.chat;
    first_line += t.first_line;
    e += t.in_longbench_e;
  }
  EXPECT_EQ(no_chat, 6);     // trec triviaqa samsum lsht lcc repobench-p
  EXPECT_EQ(first_line, 4);  // trec triviaqa samsum lsht
  EXPECT_EQ(e, 13);          // pred.py --e list
  EXPECT_FALSE(task_or_fail("lcc").chat);
  EXPECT_TRUE(task_or_fail("trec").first_line);
  EXPECT_EQ(task_or_fail("dureader").metric, Metric::RougeZh);
  EXPECT_EQ(task_or_fail("passage_count").metric, Metric::Count);
  EXPECT_EQ(&task_or_fail("hotpotqa_e"), &task_or_fail("hotpotqa"));
  EXPECT_EQ(find_task("nq"), nullptr);
  EXPECT_THROW(task_or_fail("hotpot"), bosch::Error);
}

TEST(LongBenchPrompts, FillTemplate) {
  EXPECT_EQ(fill_template("A {context} B {input}.", "ctx", "in{put}"), "A ctx B in{put}.");
  EXPECT_EQ(fill_template(task_or_fail("trec").prompt, "CTX", "INP"),
            "Please determine the type of the question below. Here are some examples of "
            "questions.\n\nCTX\nINP");
  EXPECT_EQ(fill_template(task_or_fail("repobench-p").prompt, "C\n", "I\n"),
            "Please complete the code given below. \nC\nI\nNext line of code:\n");
  EXPECT_EQ(fill_template(task_or_fail("multifieldqa_zh").prompt, "文", "问"),
            "阅读以下文字并用中文简短回答：\n\n文\n\n现在请基于上面的文章回答下面的问题，只告诉我答案，不要输出"
            "任何其他字词。\n\n问题：问\n回答：");
  EXPECT_THROW(fill_template("{question}", "c", "i"), bosch::Error);
}

TEST(LongBenchPrompts, MiddleTruncate) {
  std::vector<int32_t> ids = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(middle_truncate(ids, 4), (std::vector<int32_t>{0, 1, 8, 9}));
  // half = int(5/2) = 2: an odd budget keeps 2 + 2.
  EXPECT_EQ(middle_truncate(ids, 5), (std::vector<int32_t>{0, 1, 8, 9}));
  EXPECT_EQ(middle_truncate(ids, 10), ids);
  EXPECT_EQ(middle_truncate(ids, 100), ids);
  EXPECT_THROW(middle_truncate(ids, 1), bosch::Error);
}

TEST(LongBenchData, ReadsFixture) {
  DatasetFile f = read_dataset_file(kDir + "small/hotpotqa.jsonl");
  ASSERT_EQ(f.samples.size(), 2u);
  EXPECT_STREQ(f.task->name, "hotpotqa");
  EXPECT_FALSE(f.longbench_e);
  EXPECT_EQ(f.samples[1].answers, (std::vector<std::string>{"a red ball", "ball"}));
  EXPECT_TRUE(f.samples[0].all_classes.empty());
  EXPECT_EQ(f.samples[1].length, 5000);
  EXPECT_EQ(f.samples[0].id, "hotpotqa-0");
  EXPECT_EQ(read_dataset_file(kDir + "small/hotpotqa.jsonl", 1).samples.size(), 1u);
  DatasetFile t = read_dataset_file(kDir + "small/trec.jsonl");
  EXPECT_EQ(t.samples[0].all_classes.size(), 4u);
}

TEST(LongBenchData, ExpandsDirectoryInOfficialOrder) {
  auto files = expand_data_paths({kDir + "small"});
  ASSERT_EQ(files.size(), 5u);  // notes.txt ignored
  EXPECT_NE(files[0].find("hotpotqa.jsonl"), std::string::npos);
  EXPECT_NE(files[1].find("trec.jsonl"), std::string::npos);
  EXPECT_NE(files[2].find("samsum.jsonl"), std::string::npos);
  EXPECT_NE(files[3].find("passage_retrieval_zh.jsonl"), std::string::npos);
  EXPECT_NE(files[4].find("lcc.jsonl"), std::string::npos);
  EXPECT_THROW(expand_data_paths({kDir + "nope"}), bosch::Error);
  EXPECT_THROW(expand_data_paths({kDir + "bad"}), bosch::Error);  // no dataset-named file
}

TEST(LongBenchData, ErrorsNameFileLineAndField) {
  auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
    for (const char* p : parts)
      if (msg.find(p) == std::string::npos) return ::testing::AssertionFailure() << msg << " lacks " << p;
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(has(read_error("missing_answers.jsonl"), {"missing_answers.jsonl:2", "'answers'"}));
  EXPECT_TRUE(has(read_error("length_string.jsonl"), {"length_string.jsonl:3", "'length'"}));
  EXPECT_TRUE(has(read_error("answer_not_string.jsonl"), {":1", "'answers'[1]", "string"}));
  EXPECT_TRUE(has(read_error("unknown_dataset.jsonl"), {":1", "'dataset'", "hotpot_qa"}));
  EXPECT_TRUE(has(read_error("invalid_json.jsonl"), {"invalid_json.jsonl:3", "not valid JSON"}));
  EXPECT_TRUE(has(read_error("mixed_datasets.jsonl"), {":2", "'dataset'", "musique"}));
  EXPECT_TRUE(has(read_error("retrieval_no_id.jsonl"), {":1", "'answers'[0]", "Paragraph one"}));
  EXPECT_TRUE(has(read_error("trec_no_classes.jsonl"), {":1", "'all_classes'"}));
  EXPECT_TRUE(has(read_error("id_null.jsonl"), {":1", "'_id'"}));
  EXPECT_THROW(read_dataset_file(kDir + "bad/does_not_exist.jsonl"), bosch::Error);
  // Issue #24: exact integers only; deep nesting and long values are clear, short errors.
  EXPECT_TRUE(has(read_error("length_fraction.jsonl"),
                  {"length_fraction.jsonl:1", "field 'length' must be an integer in [0, 9223372036854775807], got 12.5"}));
  EXPECT_TRUE(has(read_error("deep_nesting.jsonl"), {"deep_nesting.jsonl:1", "JSON nested deeper than 64 levels"}));
  const std::string e = read_error("long_dataset.jsonl");
  EXPECT_TRUE(has(e, {"long_dataset.jsonl:1", "'dataset'", "unknown dataset"}));
  EXPECT_LT(e.size(), 900u) << "the dataset name is excerpted";
}

TEST(LongBenchResult, ScoresAndLengthBuckets) {
  DatasetFile f = read_dataset_file(kDir + "small/hotpotqa.jsonl");
  // Sample 0 (length 120): "The park." vs "the park" -> both [park] -> 1.
  // Sample 1 (length 5000): [ball game] vs "a red ball" [red ball]: P 1/2, R 1/2 -> 1/2;
  // vs "ball": P 1/2, R 1 -> 2/3; max over answers -> 2/3.
  bosch::LongBenchDatasetResult r = bosch::score_longbench_dataset(f, {"The park.", "ball game"});
  EXPECT_EQ(r.n, 2);
  EXPECT_EQ(r.metric, "qa_f1");
  EXPECT_NEAR(r.samples[1].score, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.score, 100.0 * (1.0 + 2.0 / 3.0) / 2.0, 1e-9);  // 83.33
  EXPECT_EQ(r.bucket_n[0], 1);
  EXPECT_EQ(r.bucket_n[1], 1);
  EXPECT_EQ(r.bucket_n[2], 0);
  EXPECT_NEAR(r.bucket_score[0], 100.0, 1e-9);
  EXPECT_NEAR(r.bucket_score[1], 200.0 / 3.0, 1e-9);
  EXPECT_TRUE(std::isnan(r.bucket_score[2]));
  EXPECT_THROW(bosch::score_longbench_dataset(f, {"one"}), bosch::Error);

  // trec: first-line rule then classification: "Individual\nQuestion: ..." -> 1.
  DatasetFile t = read_dataset_file(kDir + "small/trec.jsonl");
  bosch::LongBenchDatasetResult rt = bosch::score_longbench_dataset(t, {"\nIndividual\nQuestion: City"});
  EXPECT_DOUBLE_EQ(rt.score, 100.0);
  EXPECT_EQ(rt.bucket_n[2], 1);  // length 9000 -> 8k+

  bosch::LongBenchResult all;
  all.datasets = {r, rt};
  bosch::aggregate_longbench(all);
  EXPECT_NEAR(all.average, (r.score + 100.0) / 2.0, 1e-9);
  auto j = all.to_json(true);
  EXPECT_EQ(j["suite"], "longbench");
  EXPECT_EQ(j["datasets"][0]["dataset"], "hotpotqa");
  EXPECT_TRUE(j["datasets"][0]["length_buckets"]["8k+"]["score"].is_null());
  EXPECT_EQ(j["datasets"][1]["samples"][0]["pred"], "\nIndividual\nQuestion: City");
}
