// `bosch eval` and `bosch gen` end to end on the real test model (skipped without it).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "masks/mask_file.h"
#include "util/atomic_file.h"
#include "../test_support.h"

using bosch::tests::bosch_bin;
using bosch::tests::CliResult;
using bosch::tests::run_cli;

using namespace bosch;

namespace {

const std::string kModel = bosch::tests::stories_model();

std::string tmp(const std::string& name) { return std::string(BOSCH_BINARY_DIR) + "/" + name; }

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> v;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

class EvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::ifstream(bosch_bin()).good()) GTEST_SKIP() << "needs the bosch binary at " << bosch_bin();
  }
};

}  // namespace

TEST_F(EvalCli, JsonHasScoresBreakdownAndSettings) {
  std::string json = tmp("eval_out.json"), svg = tmp("eval_out.svg");
  std::string args = "eval " + kModel + " --suite niah:passkey,multikey --lengths 400,600 --depths 3 --samples 1 --seed 9 --split calib --json " + json + " --svg " + svg;
  CliResult r = run_cli(args);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("passkey"), std::string::npos) << r.out;  // the summary table
  auto j = nlohmann::json::parse(read_file(json));
  ASSERT_TRUE(j["exact_match"].is_number());
  EXPECT_GE(j["exact_match"].get<double>(), 0.0);
  EXPECT_LE(j["exact_match"].get<double>(), 1.0);
  EXPECT_LT(j["mean_answer_logprob"].get<double>(), 0.0);
  EXPECT_EQ(j["n_samples"], 2 * 2 * 3);
  EXPECT_TRUE(j["per_family"].contains("multikey"));
  EXPECT_TRUE(j["per_length"].contains("600"));
  EXPECT_TRUE(j["per_depth"].contains("0.5"));
  EXPECT_EQ(j["cells"].size(), 12u);
  const auto& s = j["settings"];
  EXPECT_EQ(s["model"], kModel);
  EXPECT_EQ(s["mask"], "full");
  EXPECT_EQ(s["seed"], 9);
  EXPECT_EQ(s["split"], "calib");
  EXPECT_EQ(s["lengths"], (std::vector<int>{400, 600}));
  EXPECT_TRUE(s["model_identity"].is_string());
  // Top-level order: exact_match first, then mean_answer_logprob.
  std::string text = read_file(json);
  EXPECT_LT(text.find("\"exact_match\""), text.find("\"mean_answer_logprob\""));
  EXPECT_LT(text.find("\"mean_answer_logprob\""), text.find("\"per_family\""));
  EXPECT_NE(read_file(svg).find("<svg"), std::string::npos);
  // Redoing the run from its settings gives the same numbers.
  std::string json2 = tmp("eval_out2.json");
  ASSERT_EQ(run_cli(args.substr(0, args.find(" --json")) + " --json " + json2).rc, 0);
  EXPECT_EQ(nlohmann::json::parse(read_file(json2))["cells"], j["cells"]);
}

TEST_F(EvalCli, MasksAndModes) {
  std::string json = tmp("eval_swa.json");
  CliResult r = run_cli("eval " + kModel + " --mask all-swa --window 16 --sinks 2 --suite niah:single_noise --lengths 300 --depths 2 --mode generate --json " + json);
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["settings"]["window"], 16);
  EXPECT_EQ(j["settings"]["mode"], "generate");
  EXPECT_DOUBLE_EQ(j["settings"]["swa_ratio"].get<double>(), 1.0);

  r = run_cli("eval " + kModel + " --mask all-swa --suite niah:passkey --lengths 300");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("--window"), std::string::npos) << r.out;

  std::string mask = tmp("eval_wrong_shape.json");
  MaskFile::from_plan(AttentionPlan(7, 2), {"llama", 7, 4, 2, 16, "x"}, 0).save(mask);
  r = run_cli("eval " + kModel + " --mask " + mask + " --suite niah:passkey --lengths 300");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("7 layers x 2 KV heads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5 layers x 4 KV heads"), std::string::npos) << r.out;
  std::remove(mask.c_str());

  r = run_cli("eval " + kModel + " --suite niah:bogus");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("bogus"), std::string::npos) << r.out;
}

TEST_F(EvalCli, GenWritesSamplesAndTrainingText) {
  std::string calib = tmp("gen_calib.jsonl"), test = tmp("gen_test.jsonl"), train = tmp("gen_train.jsonl");
  CliResult r = run_cli("gen " + kModel + " --suite niah:multivalue,single_uuid --lengths 700,900 --depths 3 --samples 2 --split calib --jsonl " + calib);
  ASSERT_EQ(r.rc, 0) << r.out;
  ASSERT_EQ(run_cli("gen " + kModel + " --suite niah:multivalue,single_uuid --lengths 700,900 --depths 3 --samples 2 --jsonl " + test).rc, 0);
  auto c = read_jsonl(calib), t = read_jsonl(test);
  ASSERT_EQ(c.size(), 2u * 2 * 3 * 2);
  ASSERT_EQ(t.size(), c.size());
  std::set<std::string> calib_items;
  for (const auto& s : c) {
    for (const char* f : {"prompt", "prompt_ids", "answers", "family", "length", "depth", "keys", "values"})
      ASSERT_TRUE(s.contains(f)) << f;
    EXPECT_EQ(s["split"], "calib");
    EXPECT_LE(s["prompt_ids"].size() + s["continuation_ids"].size(), s["length"].get<size_t>());
    for (const auto& k : s["keys"]) calib_items.insert(k.get<std::string>());
    for (const auto& v : s["values"]) calib_items.insert(v.get<std::string>());
  }
  for (const auto& s : t) {
    for (const auto& k : s["keys"]) EXPECT_EQ(calib_items.count(k.get<std::string>()), 0u);
    for (const auto& v : s["values"]) EXPECT_EQ(calib_items.count(v.get<std::string>()), 0u);
  }
  // Training text (tools/train/make_data.sh): NIAH samples of the train split, answers as spans.
  r = run_cli("gen " + kModel + " --train --suite niah:multiquery --lengths 900 --depths 3 --jsonl " + train);
  ASSERT_EQ(r.rc, 0) << r.out;
  auto tr = read_jsonl(train);
  ASSERT_EQ(tr.size(), 3u);
  for (const auto& x : tr) {
    std::string text = x["text"];
    ASSERT_EQ(x["answer_spans"].size(), 4u);
    for (const auto& sp : x["answer_spans"]) {
      std::string v = text.substr(sp[0].get<size_t>(), sp[1].get<size_t>() - sp[0].get<size_t>());
      EXPECT_FALSE(v.empty());
      EXPECT_EQ(calib_items.count(v), 0u) << v;
    }
  }
  r = run_cli("gen " + kModel + " --train --split test --jsonl " + train);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("--split must be train"), std::string::npos) << r.out;
  r = run_cli("gen " + kModel + " --train --suite mqar --jsonl " + train);  // gone with its generator
  EXPECT_EQ(r.rc, 1);
  for (const auto& p : {calib, test, train}) std::remove(p.c_str());
}
