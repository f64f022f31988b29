// `bosch baseline` and `bosch compare` end to end on stories260K (tests/data; skipped
// when the CLI binary is not built): exact K in the mask files, the compare JSON fields and
// the report files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "../test_support.h"

using bosch::tests::bosch_bin;
using bosch::tests::temp_dir;

namespace {

const std::string kModel = bosch::tests::stories_model();

std::string skip_reason() {
  if (!std::filesystem::exists(bosch_bin())) return bosch_bin() + " not built";
  return "";
}

int run(const std::string& args) {
  const std::string cmd = "BOSCH_QUIET=1 BOSCH_THREADS=2 " + bosch_bin() + " " + args + " > /dev/null 2>&1";
  return std::system(cmd.c_str());
}

const std::string kSmall = " --objective niah:single_noise --lengths 256 --depths 2 --window 16 --sinks 2";

}  // namespace

TEST(CompareCli, BaselineWritesAMaskWithExactlyK) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << "SKIPPED: " << r;
  const auto dir = temp_dir("bosch_baseline_cli");
  for (const std::string method : {"bme", "razor", "ablation"}) {
    const auto out = (dir / (method + ".json")).string();
    ASSERT_EQ(run("baseline " + kModel + " --method " + method + " --ratio 0.6 --out " + out + kSmall), 0) << method;
    const auto j = nlohmann::json::parse(bosch::read_file(out));
    int ones = 0;
    for (const auto& layer : j["swa"])
      for (const auto& b : layer) ones += b.get<int>();
    EXPECT_EQ(ones, 12) << method;  // round(0.6 * 5 * 4)
    EXPECT_EQ(j["window"], 16);
    EXPECT_EQ(j["provenance"]["method"], method);
  }
  EXPECT_NE(run("baseline " + kModel + " --method nonsense --ratio 0.5 --out " + (dir / "x.json").string()), 0);
  EXPECT_NE(run("baseline " + kModel + " --method bme --ratio 1.5 --out " + (dir / "x.json").string()), 0);
  std::filesystem::remove_all(dir);
}

TEST(CompareCli, CompareWritesResultsAndReport) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << "SKIPPED: " << r;
  const auto dir = temp_dir("bosch_compare_cli");
  const auto json = (dir / "out.json").string();
  ASSERT_EQ(run("compare " + kModel + " --ratios 0.5,0.75 --methods bosch,intr,locality --budget-probe 4 --budget-group 4"
                " --test-depths 2 --json " + json + " --report " + (dir / "rep").string() + kSmall),
            0);
  const auto j = nlohmann::json::parse(bosch::read_file(json));
  ASSERT_EQ(j["results"].size(), 6u);
  for (const auto& x : j["results"]) {
    for (const char* f : {"method", "ratio", "exact_match", "normalized", "evaluations", "seconds"})
      EXPECT_TRUE(x.contains(f)) << f;
    const std::string mask = x["mask"];
    EXPECT_EQ(std::count(mask.begin(), mask.end(), '1'), x["ratio"] == 0.5 ? 10 : 15);
  }
  EXPECT_EQ(j["settings"]["window"], 16);
  for (const char* f : {"report.md", "sensitivity.svg", "compare.json", "masks/bosch-r0.75.svg", "masks/intr-r0.5.json"})
    EXPECT_TRUE(std::filesystem::exists(dir / "rep" / f)) << f;
  // A non-NIAH objective has no held-out test split: refused unless --test-objective names one.
  EXPECT_NE(run("compare " + kModel + " --ratios 0.5 --methods intr --objective text:" + kModel), 0);
  std::filesystem::remove_all(dir);
}

// For models that cannot do NIAH: calibrate on one text, score on another (-NLL). The
// calibration is the model's published greedy story, the test text its own sampled stories.
TEST(CompareCli, TextObjectiveIsScoredOnAHeldOutText) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << "SKIPPED: " << r;
  const auto dir = temp_dir("bosch_compare_text");
  const std::string calib = bosch::tests::stories_greedy();
  const auto test = (dir / "test.txt").string();
  for (int seed : {1, 2})
    ASSERT_EQ(std::system(("BOSCH_QUIET=1 " + bosch_bin() + " generate " + kModel + " --temperature 1 --seed " +
                           std::to_string(seed) + " --max-tokens 200 >> " + test + " 2>/dev/null").c_str()),
              0);
  const auto json = (dir / "out.json").string();
  const std::string args = "compare " + kModel + " --ratios 0.5 --window 16 --sinks 2 --lengths 96 --samples 2"
                           " --test-samples 3 --budget-probe 4 --budget-group 4 --budget-polish 4 --objective text:" + calib;
  ASSERT_EQ(run(args + " --methods all --test-objective text:" + test + " --json " + json + " --report " +
                (dir / "rep").string()),
            0);
  const auto j = nlohmann::json::parse(bosch::read_file(json));
  EXPECT_EQ(j["settings"]["test_metric"], "mean_logprob");
  EXPECT_NE(j["settings"]["test"].get<std::string>().find(test), std::string::npos);
  bool bosch_row = false;
  for (const auto& x : j["results"]) {
    EXPECT_NE(x["method"], "retrieval") << "retrieval needs needles: left out of 'all' for text";
    EXPECT_LT(x["mean_logprob"].get<double>(), 0.0);
    bosch_row = bosch_row || x["method"] == "bosch";
  }
  EXPECT_TRUE(bosch_row);
  const std::string md = bosch::read_file((dir / "rep" / "report.md").string());
  EXPECT_NE(md.find("mean log-probability"), std::string::npos) << md;
  // The same file twice is not held out; retrieval asked for by name is refused.
  EXPECT_NE(run(args + " --methods intr --test-objective text:" + calib), 0);
  EXPECT_NE(run(args + " --methods retrieval --test-objective text:" + test), 0);
  // NIAH as a test objective would be the calibration split: refused (NIAH uses its test split).
  EXPECT_NE(run(args + " --methods intr --test-objective niah"), 0);
  std::filesystem::remove_all(dir);
}

// A compare killed after its first ratio's search (its journal complete, the second ratio's
// missing), resumed with --resume: the first search is replayed from its journal, the second
// runs afresh, and the masks equal those of an uninterrupted run.
TEST(CompareCli, ResumeAfterAKillGivesTheSameMasks) {
  if (auto r = skip_reason(); !r.empty()) GTEST_SKIP() << "SKIPPED: " << r;
  const auto dir = temp_dir("bosch_compare_resume");
  const std::string args = "compare " + kModel + " --methods bosch --budget-probe 4 --budget-group 6 --test-depths 2" + kSmall;
  ASSERT_EQ(run(args + " --ratios 0.5,0.75 --json " + (dir / "whole.json").string()), 0);
  // The "killed" run: only the first ratio finished, its journal is left behind.
  ASSERT_EQ(run(args + " --ratios 0.5,0.75 --journal-dir " + (dir / "j").string() + " --json " +
                (dir / "first.json").string()),
            0);
  std::filesystem::remove(dir / "j" / "search-r0.75.jsonl");
  ASSERT_EQ(run(args + " --ratios 0.5,0.75 --journal-dir " + (dir / "j").string() + " --resume --json " +
                (dir / "resumed.json").string()),
            0);
  const auto whole = nlohmann::json::parse(bosch::read_file((dir / "whole.json").string()));
  const auto resumed = nlohmann::json::parse(bosch::read_file((dir / "resumed.json").string()));
  ASSERT_EQ(whole["results"].size(), 2u);
  ASSERT_EQ(resumed["results"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(whole["results"][i]["mask"], resumed["results"][i]["mask"]) << i;
  EXPECT_TRUE(std::filesystem::exists(dir / "j" / "search-r0.75.jsonl"));
  EXPECT_NE(run(args + " --ratios 0.5 --resume"), 0) << "--resume needs --journal-dir";
  std::filesystem::remove_all(dir);
}
