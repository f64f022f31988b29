// The main commands run on the embedded default model with their default data settings (no
// --lengths, --objective, --depths: the NIAH length is derived from the model and the families).
// Only budgets are made small, through flags, so the test stays short.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "../test_support.h"

using bosch::tests::bosch_bin;
using bosch::tests::temp_dir;

namespace {

int run(const std::string& args, const std::filesystem::path& log) {
  const std::string cmd = "cd " + std::string(BOSCH_SOURCE_DIR) + " && BOSCH_QUIET=1 " + bosch_bin() + " " + args +
                          " > " + log.string() + " 2>&1";
  return std::system(cmd.c_str());
}

int swa_count(const nlohmann::json& mask) {
  int ones = 0;
  for (const auto& layer : mask["swa"])
    for (const auto& b : layer) ones += b.get<int>();
  return ones;
}

// Budgets and sample counts small (flags); lengths, objective and window stay at their defaults.
const std::string kSmallBudgets = " --budget-probe 2 --budget-group 2 --budget-polish 4 --depths 1";

}  // namespace

TEST(DefaultsCli, SearchBaselineAndCompareRunWithOnlyTheRatio) {
  ASSERT_TRUE(std::filesystem::exists(bosch_bin())) << bosch_bin() << " not built";
  const auto dir = temp_dir("bosch_defaults_cli");
  const auto log = dir / "log.txt";

  const auto mask = (dir / "m.json").string();
  ASSERT_EQ(run("search --ratio 0.75 --out " + mask + kSmallBudgets, log), 0) << bosch::read_file(log.string());
  const auto m = nlohmann::json::parse(bosch::read_file(mask));
  EXPECT_EQ(swa_count(m), 24);  // round(0.75 * 8 * 4)
  EXPECT_EQ(m["provenance"]["method"], "bosch-plus");
  // The starts of bosch-plus: the three stages, its sweep's ablation and gate, the static rankings.
  EXPECT_GE(m["provenance"]["starts"].size(), 4u);

  const auto base = (dir / "b.json").string();
  ASSERT_EQ(run("baseline --method ablation --ratio 0.75 --depths 1 --out " + base, log), 0) << bosch::read_file(log.string());
  EXPECT_EQ(swa_count(nlohmann::json::parse(bosch::read_file(base))), 24);

  const auto out = (dir / "c.json").string();
  ASSERT_EQ(run("compare --ratios 0.75 --methods bosch,bosch-plus,ablation --test-depths 1 --json " + out + kSmallBudgets, log), 0)
      << bosch::read_file(log.string());
  const auto c = nlohmann::json::parse(bosch::read_file(out));
  ASSERT_EQ(c["results"].size(), 3u);
  for (const auto& r : c["results"]) {
    EXPECT_EQ(r["k"], 24);
    EXPECT_TRUE(r["calibration_normalized"].is_number()) << r["method"];
  }
  // The auto length: 1024 tokens for the default model's families (512 cannot hold multikey).
  EXPECT_EQ(c["settings"]["test_lengths"], nlohmann::json::array({1024}));
  EXPECT_TRUE(c["results"][1].contains("vs_best_baseline"));
  std::filesystem::remove_all(dir);
}

// A text objective with the default starts: retrieval (which needs needles) is left out, the
// search runs; naming retrieval explicitly is a clear error.
TEST(DefaultsCli, SearchOnATextObjectiveRunsWithTheDefaultStarts) {
  const auto dir = temp_dir("bosch_defaults_text");
  const auto log = dir / "log.txt";
  std::string text;
  for (int i = 0; i < 60; ++i) text += "The little cat sat on the warm mat and looked at the birds in the tree. ";
  bosch::write_file_atomic((dir / "calib.txt").string(), text);
  const auto mask = (dir / "m.json").string();
  const std::string common = "search --ratio 0.5 --objective text:" + (dir / "calib.txt").string() +
                             " --lengths 256 --samples 2 --budget-probe 2 --budget-group 2 --budget-polish 2 --out " + mask;
  ASSERT_EQ(run(common, log), 0) << bosch::read_file(log.string());
  EXPECT_EQ(swa_count(nlohmann::json::parse(bosch::read_file(mask))), 16);
  EXPECT_NE(run(common + " --starts retrieval,locality", log), 0);
  EXPECT_NE(bosch::read_file(log.string()).find("--starts retrieval: the retrieval score needs needles"), std::string::npos)
      << bosch::read_file(log.string());
  std::filesystem::remove_all(dir);
}

// The embedded models by name, from any directory: `deep` is the source tree's models/deep.
TEST(DefaultsCli, EmbeddedModelsByName) {
  ASSERT_TRUE(std::filesystem::exists(bosch_bin())) << bosch_bin() << " not built";
  const auto dir = temp_dir("bosch_model_names");
  const auto r = bosch::tests::run_cli("info deep");  // run_cli runs in this test's cwd
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("models/deep"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mask bits    72"), std::string::npos) << r.out;
  const std::string cmd = "cd " + dir.string() + " && " + bosch_bin() + " info default > out.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(dir / "out.txt");
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(out.find("mask bits    32"), std::string::npos) << out;
  // A name that is no embedded model stays a path, and its error names it.
  const auto bad = bosch::tests::run_cli("info no_such_model");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.out.find("no_such_model"), std::string::npos) << bad.out;
}
