// Score aggregation (JSON fields, table, normalisation) and the SVG heatmap writer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tasks/niah_report.h"
#include "util/error.h"
#include "util/svg.h"

using namespace bosch;

namespace {
TaskSample sample(const std::string& family, int length, double depth) {
  TaskSample s;
  s.family = family;
  s.length = length;
  s.depth = depth;
  return s;
}
TaskSampleScore score(double v, double lp) {
  TaskSampleScore s;
  s.score = v;
  s.exact = v == 1.0;
  s.mean_logprob = lp;
  return s;
}
}  // namespace

TEST(TaskReport, AggregatesPerFamilyLengthDepth) {
  TaskReport r;
  r.add(sample("passkey", 1024, 0.0), score(1, -0.5));
  r.add(sample("passkey", 1024, 1.0), score(0, -2.5));
  r.add(sample("multivalue", 2048, 0.0), score(0.5, -1.0));
  r.add(sample("multivalue", 2048, 0.0), score(1, -1.0));
  auto j = r.to_json();
  EXPECT_DOUBLE_EQ(j["exact_match"].get<double>(), 2.5 / 4);
  EXPECT_DOUBLE_EQ(j["mean_answer_logprob"].get<double>(), -5.0 / 4);
  EXPECT_EQ(j["n_samples"], 4);
  EXPECT_DOUBLE_EQ(j["per_family"]["passkey"]["exact_match"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["per_family"]["multivalue"]["exact_match"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["per_length"]["2048"]["mean_answer_logprob"].get<double>(), -1.0);
  EXPECT_DOUBLE_EQ(j["per_depth"]["0"]["exact_match"].get<double>(), 2.5 / 3);
  EXPECT_DOUBLE_EQ(j["per_depth"]["1"]["exact_match"].get<double>(), 0.0);
  ASSERT_EQ(j["cells"].size(), 3u);
  for (const auto& c : j["cells"])
    for (const char* f : {"family", "length", "depth", "n", "exact_match", "mean_answer_logprob"})
      EXPECT_TRUE(c.contains(f)) << f;
  std::string t = r.table();
  EXPECT_NE(t.find("passkey"), std::string::npos);
  EXPECT_NE(t.find("100%"), std::string::npos);
  EXPECT_NE(t.find("0.625"), std::string::npos);  // overall mean
  // Heatmap: depth rows x length columns, mean over families; empty cells are NaN.
  Heatmap h = r.heatmap("t");
  ASSERT_EQ(h.row_labels, (std::vector<std::string>{"0%", "100%"}));
  ASSERT_EQ(h.col_labels, (std::vector<std::string>{"1024", "2048"}));
  EXPECT_DOUBLE_EQ(h.values[0], 1.0);
  EXPECT_DOUBLE_EQ(h.values[1], 0.75);
  EXPECT_DOUBLE_EQ(h.values[2], 0.0);
  EXPECT_TRUE(std::isnan(h.values[3]));
}

TEST(TaskReport, NormalizedScore) {
  EXPECT_DOUBLE_EQ(*normalized_score(0.6, 0.8, 0.4), 0.5);
  EXPECT_DOUBLE_EQ(*normalized_score(0.8, 0.8, 0.4), 1.0);
  EXPECT_DOUBLE_EQ(*normalized_score(0.4, 0.8, 0.4), 0.0);
  EXPECT_FALSE(normalized_score(0.5, 0.3, 0.3).has_value());
}

TEST(Svg, HeatmapDocument) {
  Heatmap h;
  h.title = "A <b> & c";
  h.row_labels = {"0%", "50%"};
  h.col_labels = {"1k", "2k", "4k"};
  h.values = {0, 0.5, 1, 1, std::numeric_limits<double>::quiet_NaN(), 0.25};
  std::string s = heatmap_svg(h);
  EXPECT_EQ(s.rfind("<svg", 0), 0u);
  EXPECT_NE(s.find("</svg>"), std::string::npos);
  EXPECT_NE(s.find("A &lt;b&gt; &amp; c"), std::string::npos);
  EXPECT_EQ(s.find("<b>"), std::string::npos);
  size_t cells = 0;
  for (size_t p = s.find("<title>"); p != std::string::npos; p = s.find("<title>", p + 1)) ++cells;
  EXPECT_EQ(cells, 6u);
  EXPECT_NE(s.find("no data"), std::string::npos);
  EXPECT_NE(s.find(">0.25<"), std::string::npos);
  EXPECT_NE(s.find(heatmap_color(0, 0, 1, ColorScale::red_yellow_green)), std::string::npos);
  // Colour scales: ends and clamping.
  EXPECT_EQ(heatmap_color(0, 0, 1, ColorScale::red_yellow_green), "#d73027");
  EXPECT_EQ(heatmap_color(1, 0, 1, ColorScale::red_yellow_green), "#1a9850");
  EXPECT_EQ(heatmap_color(7, 0, 1, ColorScale::red_yellow_green), "#1a9850");
  EXPECT_EQ(heatmap_color(0, 0, 1, ColorScale::white_blue), "#ffffff");
  EXPECT_EQ(heatmap_color(0.5, 0, 1, ColorScale::red_yellow_green), "#fee08b");
  h.values.pop_back();
  EXPECT_THROW(heatmap_svg(h), Error);
}
