// The BOSCH search (Black-box Binary Optimization for Short-context Head Selection): choose
// exactly K = round(rho * N) of the N = L*H (layer, KV head) pairs to turn into SWA so that the
// black-box objective suffers least. Three stages (docs/search.md records every choice the
// paper leaves open):
//  1. probes: top layer to bottom, cascaded; for layer l (layers above already converted by
//     their best choice) find the best c heads of l to convert (c = ceil(rho*H), H - 1 when that
//     is H and rho < 1: a whole-layer probe has nothing to choose), exhaustively when
//     C(H, c) <= budget_probe, else by a swap local search with restarts.
//  2. ratios: the drops sort the layers into a few coarse ratio buckets (ratio_stage.cpp).
//  3. buckets: each bucket's SWA count is fixed, its heads move between its layers by Large
//     Neighbourhood Search (small destroy sets, exact or marginal-guided repair; group_stage.cpp).
// Methods (`--method`, search_methods.cpp), so every table shows what the paper's method does
// and what ours adds:
//   bosch         the paper's three stages
//   bosch-plus    ours, the default of `bosch search`: the three stages, then starts from static
//                 rankings (single-head ablation and gate from one sweep, plus any ranking the
//                 caller passes), the best of them polished: cross-layer swaps ordered by the
//                 heads' marginals and restoration moves (a group of SWA heads back to full at
//                 once), so it never ends worse on calibration than a ranking it was given
//   bosch-single  the paper's ablation: stage 1's choices only (cut or padded to K)
//   bosch-multi   the paper's ablation: stage 3 over the whole model as one bucket
//   bosch-layer   the paper's ablation: the search at layer granularity
//   ls            the control of equal budget: the best static ranking's mask (single-head
//                 sweep), then plain swap local search (random order, first improvement)
#pragma once
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "search/core/evaluator.h"
#include "search/core/head_bits.h"
#include "search/core/objective.h"

namespace bosch::search {

// A static ranking given to bosch-plus as a start: importance per head (lowest converted first).
struct NamedRanking {
  std::string name;
  std::vector<double> importance;
};

const std::vector<std::string>& search_methods();  // bosch, bosch-plus, bosch-single, bosch-multi, bosch-layer, ls
bool is_search_method(const std::string& name);

struct SearchOptions {
  std::string method = "bosch-plus";
  double ratio = 0.5;           // rho, the target fraction of SWA heads
  int budget_probe = 32;        // stage 1: fresh evaluations per layer
  int budget_group = -1;        // stage 3: fresh evaluations per bucket (-1 = auto:
                                // max(64, 4 x the bucket's heads), so about 4 N in all)
  int buckets = 3;              // stage 2: number of coarse ratio buckets (tiers of layers)
  double bucket_share = 0.25;   // stage 3: share of its budget spent inside the buckets; the
                                // rest on one joint bucket of every layer (1: buckets only)
  int budget_polish = -1;       // polish: fresh evaluations (0 = the paper's three stages only,
                                // -1 = auto: 2 N, two rounds of single-head marginals)
  int exact_repair = 0;         // stage 3: most placements a repair scores (0 = auto: 16)
  int budget_multi = -1;        // bosch-multi: fresh evaluations (-1 = auto: 4 N)
  int budget_layer = -1;        // bosch-layer: fresh evaluations (-1 = auto: 4 L)
  int budget_ls = -1;           // ls: fresh evaluations in all (-1 = auto: what bosch's stages
                                // would be charged at full budgets; compare passes bosch's own)
  bool sweep_starts = true;     // bosch-plus: single-head sweep -> ablation and gate starts
  std::vector<NamedRanking> starts;  // bosch-plus: more starting rankings (not in the journal
                                     // header: the caller's data; their masks are journaled)
  uint64_t seed = 0;
  int stall_limit = 0;          // consecutive re-requested masks before a search gives up (0 = auto)
  nlohmann::json to_json() const;
};

// ---- stage 1 ----
struct LayerProbe {
  int layer = 0;
  std::vector<int> best_heads;      // the c heads whose conversion hurt least
  double best_score = 0;            // S^ of the cascade with this layer converted
  // S^ with one more of the layer's heads converted (the best set plus the best-scored other
  // head), on the same cascade; not part of the cascade. NaN when c = H.
  double up_score = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> head_scores;  // mean S^ of the probes where the head was SWA (-inf: never)
  int evaluations = 0;              // fresh evaluations charged to this layer
  bool exhaustive = false;
};
struct ProbeResult {
  int count = 0;                   // c
  std::vector<LayerProbe> layers;  // indexed by layer
  HeadBits cascade;                // every layer converted with its best choice
};

// ---- stage 2 ----
struct RatioAssignment {
  std::vector<double> drops;    // delta_l = s_{l+1} - s_l (s_L = 1, the full model)
  std::vector<double> weights;  // w_l in [0, 1], 1 = least sensitive (min-max of the drops)
  std::vector<int> tier;        // bucket of each layer, 0 = least sensitive
  std::vector<std::vector<int>> buckets;  // layers of each bucket, least sensitive bucket first
  std::vector<double> targets;  // per-layer count before rounding (uniform + the tier's offset)
  std::vector<int> counts;      // starting SWA heads per layer, sum == K; a bucket's sum is
                                // fixed in stage 3, its layers' counts are not
  // The guard (bosch_search.cpp): the adaptive counts lost to the near-uniform ones.
  bool uniform_fallback = false;
  std::vector<int> adaptive_counts;  // what assign_ratios proposed
  double adaptive_score = 0, uniform_score = 0;  // S^ of both starting points
};

// ---- stage 3 ----
struct GroupResult {
  int count = 0;            // SWA heads in this bucket (kept)
  std::vector<int> layers;
  double start_loss = 0, end_loss = 0;
  int budget = 0;           // fresh evaluations allowed
  int evaluations = 0;      // fresh evaluations charged to this bucket
  int lns_iterations = 0, accepted = 0, marginal_rounds = 0;
  int moved = 0;            // heads made SWA by accepted moves
  int coverage_tries = 0, coverage_accepted = 0;  // coverage moves (group_stage.cpp)
  bool exhaustive = false;
  bool joint = false;       // the joint phase over every layer (the buckets' totals may change)
};

// ---- polish (after stage 3) ----
struct PolishResult {
  double start_loss = 0, end_loss = 0;
  int evaluations = 0;                  // fresh evaluations
  int rounds = 0;                       // marginal measurements
  std::vector<std::pair<int, int>> moves;  // accepted swaps (flat SWA head made full, full head made SWA)
  int restorations = 0;                 // accepted restoration moves
  std::vector<int> restored;            // the heads they flipped (flat indices)
  int layers = 0;
};

// ---- starts (bosch-plus) ----
struct StartCandidate {
  std::string name;  // "bosch" (the three stages), "ablation", "gate", or a caller's ranking
  HeadBits bits;
  double score = 0, loss = 0;
};

// ---- whole search ----
struct StageSummary {
  std::string name;
  int64_t evaluations = 0;  // fresh evaluations
  double seconds = 0;
  double best_score = 0;    // S^ at the end of the stage
  std::string detail;
};
struct SearchResult {
  std::string method;
  HeadBits bits;            // the answer: exactly `k_total` ones
  int k_total = 0;
  double score = 0, loss = 0;  // S^ and loss of `bits`
  MaskScore raw;
  double s_full = 0, s_allswa = 0;
  ProbeResult probe;
  RatioAssignment ratios;
  std::vector<GroupResult> groups;
  PolishResult polish;
  std::vector<StartCandidate> starts;  // bosch-plus: the candidates the polish chose among
  std::string start_chosen;
  // The answers of the methods this run contains (bosch-plus runs the paper's stages first):
  // {method, bits, calibration S^, fresh evaluations spent when it was reached}.
  struct Milestone {
    std::string method;
    HeadBits bits;
    double score = 0;
    int64_t evaluations = 0;
    double seconds = 0;
  };
  std::vector<Milestone> milestones;
  const Milestone* milestone(const std::string& method) const;
  std::vector<StageSummary> stages;
  int64_t evaluations = 0, computed = 0, replayed = 0, memo_hits = 0;
  double seconds = 0, objective_seconds = 0;
  ObjectiveStats objective_stats;
  nlohmann::json to_json() const;
};
// Runs opt.method. Prints per-stage summaries to stderr unless BOSCH_QUIET is set.
SearchResult run_bosch_search(Evaluator& ev, const SearchOptions& opt);

}  // namespace bosch::search
