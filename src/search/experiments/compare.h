// `bosch compare`: the search and every baseline at every ratio, each mask built from the
// CALIBRATION objective only and then scored on the held-out TEST objective (another Objective
// instance over test-split samples; the two never share data).
//   normalized = (S_test(mask) - S_test(all-SWA)) / (S_test(full) - S_test(all-SWA)), null when
//   the two references are equal; exact_match = the test objective's exact rate.
// Costs per row are what building that mask from scratch takes: a static ranking computed once
// and reused across ratios reports its whole cost (evaluations, seconds) at every ratio.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/baselines/baseline.h"
#include "search/stages/bosch_search.h"
#include "search/core/objective.h"

namespace bosch::search {

// "all" = the search methods of one run (bosch, bosch-plus, bosch-single) + bosch-layer +
// every baseline except duo (duo too when `have_duo`); bosch-multi only by name (a search of
// its own at every ratio). Otherwise a comma-separated list of method names (a search method
// or a baseline; aliases allowed). Canonical, de-duplicated, in the given order. Error on an
// unknown name.
std::vector<std::string> parse_compare_methods(const std::string& spec, bool have_duo);
// "0.25,0.5,0.75" -> sorted ascending, unique, each in [0, 1]; Error otherwise.
std::vector<double> parse_ratios(const std::string& spec);

struct CompareOptions {
  std::vector<double> ratios = {0.25, 0.5, 0.75, 0.875};
  std::vector<std::string> methods;  // canonical names
  SearchOptions search;              // ratio is set per run
  double alpha = 1.0;
  SwaShape swa;
  std::string journal_dir;  // "" = no journals; else DIR/search-r<ratio>.jsonl per search
  bool resume = false;
};

// Paired bootstrap over test samples of (method - baseline) in normalised units.
struct PairedInterval {
  std::string baseline;  // the best baseline on test at this ratio
  double diff = 0, lo = 0, hi = 0;  // mean difference and its 95% percentile interval
  int samples = 0, resamples = 0;
};
PairedInterval paired_bootstrap(const std::vector<double>& a, const std::vector<double>& b, double scale,
                                int resamples, uint64_t seed);

struct CompareRow {
  std::string method;
  double ratio = 0;
  int k = 0;
  double exact_match = 0;
  std::optional<double> normalized;
  std::optional<double> calib_normalized;  // S^ on the calibration objective
  std::optional<PairedInterval> vs_baseline;  // search methods: against the best baseline
  MaskScore test;             // raw test score of the mask
  int64_t evaluations = 0;   // calibration objective evaluations to build the mask
  double seconds = 0;        // time to build the mask (test scoring excluded)
  HeadBits bits;
  nlohmann::json provenance;
};

// Stage-1 per-layer sensitivity of one search run.
struct LayerSensitivity {
  double ratio = 0;
  std::vector<double> drops, weights, best_scores;
  std::vector<int> counts;        // SWA heads per layer from stage 2
  std::vector<int> final_counts;  // ... in the search's answer (the polish can move heads)
};

struct CompareResult {
  int n_layers = 0, n_heads = 0;
  std::vector<double> ratios;
  std::vector<std::string> methods;
  std::vector<CompareRow> rows;  // ratio-major, methods in order
  MaskScore test_full, test_allswa, calib_full, calib_allswa;
  std::vector<LayerSensitivity> sensitivity;  // one per search run
  std::vector<nlohmann::json> searches;       // SearchResult::to_json per ratio
  double test_seconds = 0;
  int64_t test_evaluations = 0;
  bool exact_metric = true;  // tables show exact match; false (text tests): mean log-probability

  const CompareRow* find(const std::string& method, double ratio) const;
  // {"results": [{method, ratio, k, exact_match, normalized, evaluations, seconds, raw_score,
  //   mean_logprob, mask}], "references": {full, all_swa}, "sensitivity": [...],
  //   "n_layers", "n_heads", "ratios", "methods", "searches": [...]}
  nlohmann::json to_json() const;
};

// `baselines` must describe the calibration side (its objective, if any, is `calib`).
// `starts`: the static rankings bosch-plus starts from (besides its own single-head sweep).
CompareResult run_compare(Objective& calib, Objective& test, BaselineRunner& baselines,
                          const CompareOptions& opt);
// The rankings among `methods` that bosch-plus can start from without evaluations of its own
// (attention statistics of the full model): computed once through `baselines`.
std::vector<NamedRanking> static_start_rankings(BaselineRunner& baselines, const std::vector<std::string>& names);

}  // namespace bosch::search
