// `bosch eval --sweep heads|layers` (one model load for the whole table) against the same
// numbers measured one mask at a time through `--mask heads:L.H` / `--mask layers:L`: the two
// paths share only the scorer.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "../test_support.h"

using bosch::tests::run_cli;

namespace {

const std::string kModel = std::string(BOSCH_SOURCE_DIR) + "/models/default";
const std::string kData = " --suite niah:passkey,single_noise --lengths 1024 --depths 1 --window 64 --sinks 4";

double exact_match(const std::string& mask, const std::filesystem::path& dir) {
  const std::string out = (dir / "one.json").string();
  const auto r = run_cli("eval " + kModel + kData + " --mask " + mask + " --json " + out);
  EXPECT_EQ(r.rc, 0) << r.out;
  return nlohmann::json::parse(bosch::read_file(out))["exact_match"].get<double>();
}

}  // namespace

TEST(SweepCli, LayerAndHeadCostsEqualOneMaskAtATime) {
  const auto dir = bosch::tests::temp_dir("sweep_cli");
  const std::string lj = (dir / "layers.json").string(), hj = (dir / "heads.json").string();
  auto r = run_cli("eval " + kModel + kData + " --sweep layers --json " + lj);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("| layer SWA(64, 4) | exact match | cost vs full |"), std::string::npos) << r.out;
  r = run_cli("eval " + kModel + kData + " --sweep heads --json " + hj);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto layers = nlohmann::json::parse(bosch::read_file(lj));
  const auto heads = nlohmann::json::parse(bosch::read_file(hj));
  ASSERT_EQ(layers["cost"].size(), 8u);
  ASSERT_EQ(heads["cost"].size(), 32u);
  const double full = layers["exact_match_full"].get<double>();
  EXPECT_GT(full, 0.5);  // the default model answers these
  EXPECT_DOUBLE_EQ(heads["exact_match_full"].get<double>(), full);
  for (int l : {1, 5}) EXPECT_DOUBLE_EQ(layers["cost"][l].get<double>(), full - exact_match("layers:" + std::to_string(l), dir)) << l;
  EXPECT_DOUBLE_EQ(heads["cost"][5 * 4 + 0].get<double>(), full - exact_match("heads:5.0", dir));
  // Refusals name the flag.
  EXPECT_NE(run_cli("eval " + kModel + " --sweep rows --window 64").out.find("--sweep: expected heads or layers"),
            std::string::npos);
  EXPECT_NE(run_cli("eval " + kModel + " --sweep heads").out.find("--sweep needs --window"), std::string::npos);
  std::filesystem::remove_all(dir);
}
