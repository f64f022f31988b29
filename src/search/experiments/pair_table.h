// The entanglement table (`bosch pairs`): for the heads that cost most when converted alone,
// what converting two of them together costs compared with the sum of their single costs.
//   drop(X)      = (S(full) - S(X SWA, the rest full)) / (S(full) - S(all SWA))   (normalised)
//   interaction  = drop({a, b}) - drop(a) - drop(b)
// A static ranking assumes every interaction is 0. Positive: the pair costs more than its parts,
// the signature of backups (each head stands in for the other: self-repair, the Hydra effect);
// negative: the heads share one function (a chain needs both, so losing either loses it). These
// are the measurements docs/simulator.md fits its redundancy and pair parameters to.
#pragma once
#include "masks/mask_file.h"  // parse_head_list (--heads)
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/core/objective.h"
#include "util/svg.h"

namespace bosch::search {

struct PairTableOptions {
  int top = 12;               // heads with the largest single drop (when `heads` is empty)
  std::vector<int> heads;     // flat indices (layer * n_heads + head) to tabulate instead
  double tolerance = 0.05;    // |interaction| up to this is "additive"
};

// What a pair's numbers say (the thresholds are the tolerance):
//   backups   interaction > tol: together they cost more than apart
//   chain     interaction < -tol and each alone costs nearly the pair (within tol): both needed
//   overlap   interaction < -tol otherwise (sub-additive)
//   additive  |interaction| <= tol: what a static ranking assumes
std::string classify_pair(double drop_a, double drop_b, double drop_ab, double tolerance);

struct PairEntry {
  int a = 0, b = 0;  // flat head indices
  double drop_a = 0, drop_b = 0, drop_ab = 0, interaction = 0;
  std::string kind;
};

struct PairTable {
  int n_layers = 0, n_heads = 0;
  std::vector<int> heads;            // the tabulated heads, by decreasing single drop
  std::vector<double> single_drop;   // per tabulated head
  std::vector<PairEntry> pairs;      // every pair of tabulated heads (i < j in `heads` order)
  double tolerance = 0;
  int64_t evaluations = 0;           // fresh objective evaluations
  double seconds = 0;
  std::string objective;             // the objective's description

  std::string head_name(int flat) const;  // "L3.H1"
  nlohmann::json to_json() const;
  // The pairs sorted by |interaction| (largest first), at most `max_rows`, with a count per kind.
  std::string markdown(int max_rows) const;
  // Heads x heads: the interaction off the diagonal, the single drop on it.
  Heatmap heatmap() const;
};

// Evaluates full, all-SWA, every single head (when `heads` is not given: to rank them) and
// every pair of the chosen heads on `obj` (a memoising objective makes repeats free).
PairTable pair_table(Objective& obj, const PairTableOptions& opt);


}  // namespace bosch::search
