// `bosch pairs` end to end on a planted objective: the JSON, the heatmap and the report are
// written and agree with the library's table.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "search/experiments/pair_table.h"
#include "search/objectives/synthetic_objective.h"
#include "../test_support.h"

using bosch::tests::bosch_bin;

namespace fs = std::filesystem;

namespace {

TEST(PairsCli, WritesTheTableTheLibraryComputes) {
  const fs::path dir = fs::temp_directory_path() / ("bosch-pairs-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string cmd = bosch_bin() + " pairs --objective synthetic:3x4:5 --top 5 --out " + (dir / "p.json").string() +
                          " --svg " + (dir / "p.svg").string() + " --report " + (dir / "p.md").string() +
                          " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(dir / "p.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  auto obj = bosch::search::make_synthetic_objective("synthetic:3x4:5");
  bosch::search::PairTableOptions opt;
  opt.top = 5;
  const auto t = bosch::search::pair_table(*obj, opt);
  ASSERT_EQ(j["pairs"].size(), t.pairs.size());
  for (size_t i = 0; i < t.pairs.size(); ++i) {
    EXPECT_EQ(j["pairs"][i]["a"], t.head_name(t.pairs[i].a));
    EXPECT_DOUBLE_EQ(j["pairs"][i]["interaction"].get<double>(), t.pairs[i].interaction);
    EXPECT_EQ(j["pairs"][i]["kind"], t.pairs[i].kind);
  }
  EXPECT_TRUE(fs::file_size(dir / "p.svg") > 500);
  EXPECT_TRUE(fs::file_size(dir / "p.md") > 100);
  fs::remove_all(dir);
}

}  // namespace
