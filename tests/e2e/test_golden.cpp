// The golden test of the refactors (issue #41): a small search and compare on the embedded default
// model (one ratio) and a compare on the search simulator (5 instances) must write the same JSON,
// byte for byte, once timings are removed. A change that moves any mask, score, evaluation count
// or setting fails here. When a change of behaviour is intended, rewrite the files with
// BOSCH_UPDATE_GOLDEN=1 and say why in the commit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "../test_support.h"

using bosch::tests::run_cli;
using bosch::tests::temp_dir;
using bosch::tests::test_data;

namespace {

// Keys whose values are wall-clock measurements (the rest is deterministic).
bool is_timing(const std::string& key) {
  auto ends = [&](const std::string& s) { return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0; };
  return ends("seconds") || ends("_per_second");
}

void strip_timings(nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (is_timing(it.key())) {
        it = j.erase(it);
      } else {
        strip_timings(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) strip_timings(e);
  }
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
}

// The JSON at `path` without timings, with the scratch directory and the checkout's paths
// replaced by "$DIR" and "$SRC" (they differ from clone to clone).
std::string normalised(const std::string& path, const std::string& dir) {
  std::string text = bosch::read_file(path);
  replace_all(text, dir, "$DIR");
  replace_all(text, BOSCH_SOURCE_DIR, "$SRC");
  nlohmann::json j = nlohmann::json::parse(text);
  strip_timings(j);
  return j.dump(1) + "\n";
}

// The first line where `got` and `want` differ, for the failure message.
std::string first_difference(const std::string& got, const std::string& want) {
  size_t line = 1, start = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) {
      const auto end_of = [&](const std::string& s) { return s.substr(start, s.find('\n', start) - start); };
      return "line " + std::to_string(line) + ": got '" + end_of(got) + "', golden '" + end_of(want) + "'";
    }
    if (got[i] == '\n') ++line, start = i + 1;
  }
  return "lengths differ: got " + std::to_string(got.size()) + " bytes, golden " + std::to_string(want.size());
}

void check_golden(const std::string& produced, const std::string& dir, const std::string& name) {
  const std::string got = normalised(produced, dir);
  const std::string golden = test_data("golden/" + name);
  if (const char* u = std::getenv("BOSCH_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    bosch::write_file_atomic(golden, got);
    GTEST_SKIP() << "rewrote " << golden;
  }
  const std::string want = bosch::read_file(golden);
  EXPECT_TRUE(got == want) << name << " differs from " << golden << " (" << first_difference(got, want) << ")";
}

const std::string kModel = std::string(BOSCH_SOURCE_DIR) + "/models/default";
const std::string kData =
    " --objective niah:single_noise --lengths 512 --depths 1 --window 16 --sinks 2 --seed 0"
    " --budget-probe 8 --budget-group 12 --budget-polish 6";

}  // namespace

TEST(Golden, SearchOnTheDefaultModel) {
  const auto dir = temp_dir("golden_search");
  const auto out = (dir / "mask.json").string();
  const auto r = run_cli("search " + kModel + " --ratio 0.75 --method bosch" + kData + " --out " + out);
  ASSERT_EQ(r.rc, 0) << r.out;
  check_golden(out, dir.string(), "default-search.json");
  std::filesystem::remove_all(dir);
}

TEST(Golden, CompareOnTheDefaultModel) {
  const auto dir = temp_dir("golden_compare");
  const auto out = (dir / "compare.json").string();
  const auto r = run_cli("compare " + kModel + " --ratios 0.75 --methods bosch,bosch-plus,gate,ablation,razor,rand"
                         " --test-depths 1" + kData + " --json " + out);
  ASSERT_EQ(r.rc, 0) << r.out;
  check_golden(out, dir.string(), "default-compare.json");
  std::filesystem::remove_all(dir);
}

TEST(Golden, CompareOnTheSimulator) {
  const auto dir = temp_dir("golden_simulator");
  const auto out = (dir / "compare.json").string();
  const auto r = run_cli("compare --objective synthetic:qwen3-8b --instances 5 --ratios 0.75"
                         " --methods bosch,bosch-plus,ls,gate,ablation,intr --seed 0 --json " + out);
  ASSERT_EQ(r.rc, 0) << r.out;
  check_golden(out, dir.string(), "simulator-compare.json");
  std::filesystem::remove_all(dir);
}
