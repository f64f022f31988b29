// Reports of `bosch compare`: the ratio x method Markdown table, mask pictures (layers x KV
// heads), the stage-1 per-layer sensitivity, and head turnover across ratios.
#pragma once
#include <string>
#include <vector>

#include "search/experiments/compare.h"
#include "search/core/objective.h"
#include "util/svg.h"

namespace bosch::search {

// Jaccard distance 1 - |A n B| / |A u B| between the SWA sets of two masks (0 when both are
// empty). Error when the sizes differ.
double jaccard_distance(const HeadBits& a, const HeadBits& b);

struct Turnover {
  std::string method;
  std::vector<double> from, to;      // consecutive ratios
  std::vector<double> distance;      // Jaccard distance between their SWA sets
};
// Per method, between consecutive ratios (ascending). Layer-level nested methods give small
// distances; a method that reshuffles its heads when the ratio changes gives large ones.
std::vector<Turnover> head_turnover(const CompareResult& r);

// Cells "normalized / exact match" with 3 decimals ("n/a" when normalisation is undefined),
// one row per ratio (with K), one column per method; header row, separator row. Then the
// references line. Deterministic: tests compare it literally.
std::string markdown_table(const CompareResult& r);
std::string turnover_markdown(const std::vector<Turnover>& t);
// Search methods vs the best baseline per ratio: calibration and test S^, paired-bootstrap CI, cost.
std::string versus_markdown(const CompareResult& r);
// One row per layer: stage-1 drop, weight and SWA count per ratio of each search run.
std::string sensitivity_markdown(const CompareResult& r);
// Layers x (ratio) heatmap of the stage-1 drops.
Heatmap sensitivity_heatmap(const CompareResult& r);
// Layers (rows) x KV heads (cols), 1 = SWA, white-blue.
Heatmap mask_heatmap(const HeadBits& bits, int n_layers, int n_heads, const std::string& title);

// Writes DIR/report.md (all tables), DIR/masks/<method>-r<ratio>.svg for every row and
// DIR/sensitivity.svg (when a search ran). Returns the paths written.
std::vector<std::string> write_compare_report(const CompareResult& r, const std::string& dir,
                                              const std::string& title);
// "0.75" style file-name fragment of a ratio ("0.875", "0.5", "1").
std::string ratio_tag(double ratio);

}  // namespace bosch::search
