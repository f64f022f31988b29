// `bosch compare --objective synthetic:SHAPE[:SEED] --instances N`: every method that needs no
// model weights (the BOSCH variants, the layer heuristics, random heads, single-head ablation
// and gate) on N seeded simulator instances (simulator.h; instance i has seed SEED + i), each
// mask built on the instance's calibration samples and scored on its independent test samples.
// Per (ratio, method): mean test S^ over instances with a 95% bootstrap interval, mean
// calibration S^, evaluations and seconds; per search method, the paired difference to the
// baseline with the best mean (bootstrap over instances) and wins/ties/losses per instance.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/experiments/compare.h"
#include "search/objectives/simulator.h"

namespace bosch::search {

// Methods usable without model weights (for "all" and to refuse the others by name).
bool needs_model_weights(const std::string& method);

struct SimulatedCompareOptions {
  SimulatorSpec spec;     // shape, parameters, first instance seed
  int instances = 100;
  CompareOptions compare; // ratios, methods (canonical, none needing weights), search budgets
};

struct SimulatedCell {
  std::string method;
  double ratio = 0;
  double test = 0, lo = 0, hi = 0;  // mean test S^ over instances, 95% bootstrap interval
  double calib = 0;                 // mean calibration S^
  double exact = 0;                 // mean test exact-match rate
  double evaluations = 0, seconds = 0;  // means per instance
  std::vector<double> per_instance;     // test S^ of each instance
  std::optional<PairedInterval> vs_baseline;  // search methods: vs the best baseline by mean
  int wins = 0, ties = 0, losses = 0;         // ... per instance (|diff| < 1e-9 is a tie)
  std::optional<PairedInterval> vs_ls;        // bosch: vs ls, the control of equal budget
};

struct SimulatedCompareResult {
  SimulatorParams params;
  uint64_t first_seed = 0;
  int instances = 0;
  std::vector<double> ratios;
  std::vector<std::string> methods;
  std::vector<SimulatedCell> cells;  // ratio-major, methods in order
  double full_exact = 0, allswa_exact = 0;  // mean test exact match of the references
  double seconds = 0;
  int64_t evaluations = 0;  // calibration evaluations of every instance together
  const SimulatedCell* find(const std::string& method, double ratio) const;
  nlohmann::json to_json() const;
};

SimulatedCompareResult run_simulated_compare(const SimulatedCompareOptions& opt);
// The ratio x method table (mean [95% interval]) and the search-vs-best-baseline table.
std::string simulated_markdown(const SimulatedCompareResult& r);

}  // namespace bosch::search
