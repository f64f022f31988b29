// `bosch compare` core (compare.h) and its reports (report.h) on synthetic objectives: exact K
// for every method, test scores only from the test objective, the JSON fields, the Markdown
// table, Jaccard turnover and the written files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "search/experiments/compare.h"
#include "search/core/journal.h"
#include "search/experiments/report.h"
#include "search/objectives/synthetic_objective.h"
#include "util/atomic_file.h"
#include "util/error.h"

using namespace bosch;
using namespace bosch::search;

namespace {

int ones(const HeadBits& b) { return static_cast<int>(std::count(b.begin(), b.end(), 1)); }

std::vector<double> unary_costs(int n, int mul, int mod) {
  std::vector<double> u(n);
  for (int i = 0; i < n; ++i) u[i] = 0.01 + 0.02 * ((i * mul) % mod);
  return u;
}

// A hand-built result: 2 ratios x 2 methods on 2 x 2 heads.
CompareResult small_result() {
  CompareResult r;
  r.n_layers = 2, r.n_heads = 2;
  r.ratios = {0.25, 0.5};
  r.methods = {"bosch", "intr"};
  r.test_full = {1.0, 0.75, -0.5};
  r.test_allswa = {0.0, 0.0, -3.0};
  auto row = [](std::string m, double ratio, int k, double em, std::optional<double> norm, HeadBits b) {
    CompareRow x;
    x.method = std::move(m), x.ratio = ratio, x.k = k, x.exact_match = em, x.normalized = norm, x.bits = std::move(b);
    x.evaluations = 10, x.seconds = 0.5;
    return x;
  };
  r.rows = {row("bosch", 0.25, 1, 0.5, 0.9, {1, 0, 0, 0}), row("intr", 0.25, 1, 0.25, std::nullopt, {1, 0, 0, 0}),
            row("bosch", 0.5, 2, 0.125, 0.75, {0, 1, 1, 0}), row("intr", 0.5, 2, 0.0, 0.1, {1, 1, 0, 0})};
  return r;
}

}  // namespace

TEST(Compare, ParsesMethodsAndRatios) {
  const auto all = parse_compare_methods("all", false);
  EXPECT_EQ(all.front(), "bosch");
  EXPECT_EQ(std::count(all.begin(), all.end(), "duo"), 0);
  // bosch, bosch-plus, bosch-single, bosch-layer, ls + every baseline but duo (bosch-multi by name only)
  EXPECT_EQ(all.size(), baseline_methods().size() + 4);
  EXPECT_EQ(std::count(all.begin(), all.end(), "bosch-multi"), 0);
  EXPECT_EQ(std::count(all.begin(), all.end(), "ls"), 1);
  EXPECT_EQ(parse_compare_methods("all", true).size(), baseline_methods().size() + 5);
  EXPECT_EQ(parse_compare_methods("bosch-multi,DCAM", false), (std::vector<std::string>{"bosch-multi", "locality"}));
  EXPECT_EQ(parse_compare_methods("BME, fisher,bosch,bme", false), (std::vector<std::string>{"bme", "gate", "bosch"}));
  EXPECT_THROW(parse_compare_methods("bme,,intr", false), Error);
  EXPECT_THROW(parse_compare_methods("magic", false), Error);
  EXPECT_EQ(parse_ratios("0.75,0.25, 0.5,0.25"), (std::vector<double>{0.25, 0.5, 0.75}));
  EXPECT_THROW(parse_ratios("0.5,1.5"), Error);
  EXPECT_THROW(parse_ratios("0.5x"), Error);
  EXPECT_THROW(parse_ratios(""), Error);
}

TEST(Compare, RunsEveryMethodAndScoresOnlyOnTheTestObjective) {
  setenv("BOSCH_QUIET", "1", 1);
  const int L = 4, H = 4, N = L * H;
  SyntheticObjective calib(L, H, unary_costs(N, 5, 16));
  SyntheticObjective test(L, H, unary_costs(N, 7, 16));  // another "data set"
  BaselineInputs in;
  in.n_layers = L, in.n_heads = H, in.swa = {8, 2}, in.objective = &calib;
  BaselineRunner runner(in);
  CompareOptions o;
  o.ratios = {0.25, 0.5, 0.875};
  o.methods = {"bosch", "rand", "intr", "bme", "rand-heads", "gate", "ablation"};
  o.search.budget_probe = 8, o.search.budget_group = 8;
  const CompareResult r = run_compare(calib, test, runner, o);
  ASSERT_EQ(r.rows.size(), o.ratios.size() * o.methods.size());
  // The test objective saw the two references and each distinct mask once, nothing else.
  std::vector<HeadBits> distinct = {HeadBits(N, 0), HeadBits(N, 1)};
  for (const auto& row : r.rows)
    if (std::find(distinct.begin(), distinct.end(), row.bits) == distinct.end()) distinct.push_back(row.bits);
  EXPECT_EQ(test.calls().size(), distinct.size());
  EXPECT_EQ(r.test_evaluations, static_cast<int64_t>(distinct.size()));
  for (const auto& row : r.rows) {
    EXPECT_EQ(ones(row.bits), target_count(row.ratio, L, H)) << row.method << " " << row.ratio;
    EXPECT_EQ(row.k, target_count(row.ratio, L, H));
    const double s = test.value(row.bits);
    ASSERT_TRUE(row.normalized.has_value());
    EXPECT_NEAR(*row.normalized, (s - r.test_allswa.value) / (r.test_full.value - r.test_allswa.value), 1e-12);
    if (row.method == "gate" || row.method == "ablation") {
      EXPECT_EQ(row.evaluations, N + 1);
    } else if (row.method == "bosch") {
      EXPECT_GT(row.evaluations, 0);
    } else {
      EXPECT_EQ(row.evaluations, 0) << row.method;
    }
  }
  EXPECT_EQ(r.sensitivity.size(), o.ratios.size());
  EXPECT_EQ(r.sensitivity[0].drops.size(), static_cast<size_t>(L));

  const nlohmann::json j = r.to_json();
  ASSERT_TRUE(j["results"].is_array());
  ASSERT_EQ(j["results"].size(), r.rows.size());
  for (const auto& x : j["results"]) {
    for (const char* f : {"method", "ratio", "exact_match", "normalized", "evaluations", "seconds"})
      EXPECT_TRUE(x.contains(f)) << f;
    EXPECT_TRUE(x["method"].is_string());
    EXPECT_TRUE(x["ratio"].is_number());
    EXPECT_TRUE(x["evaluations"].is_number_integer());
    EXPECT_EQ(bits_from_string(x["mask"], N, "test").size(), static_cast<size_t>(N));
  }
  EXPECT_EQ(j["results"][0]["method"], "bosch");
  EXPECT_EQ(j["results"][0]["ratio"], 0.25);
  EXPECT_TRUE(j["references"]["full"].contains("raw_score"));
}

TEST(Compare, RejectsMismatchedObjectives) {
  SyntheticObjective a(2, 2, {0.1, 0.2, 0.3, 0.4}), b(2, 3, std::vector<double>(6, 0.1));
  BaselineInputs in;
  in.n_layers = 2, in.n_heads = 2;
  BaselineRunner runner(in);
  CompareOptions o;
  o.methods = {"intr"};
  EXPECT_THROW(run_compare(a, b, runner, o), Error);
}

TEST(Report, JaccardDistance) {
  EXPECT_DOUBLE_EQ(jaccard_distance({0, 0, 0}, {0, 0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(jaccard_distance({1, 1, 0, 0}, {1, 1, 0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(jaccard_distance({1, 0, 0, 0}, {0, 1, 0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(jaccard_distance({1, 1, 0, 0}, {1, 1, 1, 0}), 1.0 - 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(jaccard_distance({1, 1, 1, 0}, {0, 1, 1, 1}), 1.0 - 2.0 / 4.0);
  EXPECT_THROW(jaccard_distance({1}, {1, 0}), Error);
  const auto t = head_turnover(small_result());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].method, "bosch");
  ASSERT_EQ(t[0].distance.size(), 1u);
  EXPECT_DOUBLE_EQ(t[0].distance[0], 1.0);      // {0} -> {1, 2}: disjoint
  EXPECT_DOUBLE_EQ(t[1].distance[0], 0.5);      // {0} -> {0, 1}
  EXPECT_EQ(t[0].from[0], 0.25);
  EXPECT_EQ(t[0].to[0], 0.5);
}

TEST(Report, MarkdownTableFormat) {
  const std::string expected =
      "Test split, each cell: normalized score / exact match (normalized = (S - S_allswa) / (S_full - S_allswa)).\n"
      "\n"
      "| ratio (K) | bosch | intr |\n"
      "|---|---|---|\n"
      "| 0.25 (1) | 0.900 / 0.500 | n/a / 0.250 |\n"
      "| 0.5 (2) | 0.750 / 0.125 | 0.100 / 0.000 |\n"
      "\n"
      "References (test): full model S = 1.0000, exact match 0.750; all-SWA S = 0.0000, exact match 0.000.\n";
  EXPECT_EQ(markdown_table(small_result()), expected);
  const std::string turnover = turnover_markdown(head_turnover(small_result()));
  EXPECT_NE(turnover.find("| method | 0.25 -> 0.5 |\n|---|---|\n| bosch | 1.000 |\n| intr | 0.500 |\n"),
            std::string::npos)
      << turnover;
}

TEST(Report, WritesTablesAndPictures) {
  CompareResult r = small_result();
  r.sensitivity.push_back({0.5, {0.2, 0.05}, {0.0, 1.0}, {0.8, 0.75}, {0, 2}, {1, 2}});
  const auto dir = std::filesystem::temp_directory_path() / ("bosch_report_" + std::to_string(::getpid()));
  const auto files = write_compare_report(r, dir.string(), "test report");
  EXPECT_EQ(files.size(), 4u + 2u);  // 4 masks, sensitivity.svg, report.md
  for (const auto& f : files) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  const std::string md = read_file((dir / "report.md").string());
  EXPECT_NE(md.find("# test report"), std::string::npos);
  EXPECT_NE(md.find("| 0 | 0.2000 / 0.000 / 0 -> 1 |"), std::string::npos) << md;  // polish moved a head
  EXPECT_NE(md.find("| 1 | 0.0500 / 1.000 / 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.25 | 10 / 0.5s | 10 / 0.5s |"), std::string::npos) << md;
  const std::string svg = read_file((dir / "masks" / "bosch-r0.25.svg").string());
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  const Heatmap h = mask_heatmap({1, 0, 0, 1}, 2, 2, "m");
  EXPECT_EQ(h.row_labels.size(), 2u);
  EXPECT_EQ(h.values, (std::vector<double>{1, 0, 0, 1}));
  EXPECT_THROW(mask_heatmap({1, 0, 0}, 2, 2, "m"), Error);
  std::filesystem::remove_all(dir);
}
