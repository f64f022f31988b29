// The steps of the BOSCH search, for the stage files (probe_stage, ratio_stage, group_stage,
// polish_stage, search_methods, bosch_search.cpp) and their tests; callers of the search need
// only bosch_search.h.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "search/core/rng.h"
#include "search/stages/bosch_search.h"

namespace bosch::search {

// The per-layer probe count.
int probe_count(double ratio, int n_heads);                 // ceil(rho * H), H - 1 if that is H < rho H

ProbeResult run_probe_stage(Evaluator& ev, const SearchOptions& opt);

std::vector<double> probe_drops(const ProbeResult& probe);
// Heads per layer between adjacent outer buckets and the middle one: round(min(rho, 1-rho) H / 2), >= 1.
int bucket_step(double ratio, int n_heads);
RatioAssignment assign_ratios(const std::vector<double>& drops, int n_heads, int k_total, int n_buckets = 3);
// K heads spread as evenly as possible (floor(K/L) per layer, one more for the K mod L layers
// of highest weight; ties: lower layer first).
std::vector<int> uniform_counts(const std::vector<double>& weights, int n_heads, int k_total);

// Layer l gets counts[l] heads: the stage-1 best heads, extended (or cut) by head_scores.
HeadBits initial_assignment(const ProbeResult& probe, const std::vector<int>& counts, int n_heads);
// opt.budget_group, or auto (-1): max(64, 4 x heads in the bucket).
int group_budget(const SearchOptions& opt, int heads_in_group);
// Most placements one repair scores (opt.exact_repair, auto 16).
int repair_limit(const SearchOptions& opt);
// Stage 3's fresh-evaluation budgets: each bucket's group_budget scaled by bucket_share (all of
// it when there is one bucket), and the joint phase's, the rest of group_budget(every head)
// (0 with one bucket or a share of 1).
struct Stage3Budgets {
  std::vector<int> buckets;
  int joint = 0;
  int64_t total() const;
};
Stage3Budgets stage3_budgets(const SearchOptions& opt, const std::vector<int>& bucket_heads, int all_heads,
                             bool several_buckets);
// Optimises `assignment` in place, bucket by bucket (ratios.buckets, ratios.counts).
// `probe` (optional): stage 1's result, whose head scores guide the coverage move.
std::vector<GroupResult> run_group_stage(Evaluator& ev, const SearchOptions& opt, const RatioAssignment& ratios,
                                         HeadBits& assignment, const ProbeResult* probe = nullptr);
// Optimises one bucket: the given layers' SWA heads keep their total, not their layers.
GroupResult optimise_group(Evaluator& ev, const SearchOptions& opt, const std::vector<int>& layers,
                           HeadBits& assignment, uint64_t seed, const ProbeResult* probe = nullptr);
// The coverage move's restorations: in each of `layers` whose heads are all SWA in `bits`, the
// head stage 1 found most needed (lowest head score), when its score is below the layer's best;
// at most `most`, largest gap first (ties: lower layer).
std::vector<int> coverage_restorations(const ProbeResult& probe, const std::vector<int>& layers, const HeadBits& bits,
                                       int n_heads, int most);

// Consecutive rejected swaps that end a round.
int polish_misses_limit(int n_heads);
// opt.budget_polish, or 2 * n_bits for auto (-1).
int polish_budget(const SearchOptions& opt, size_t n_bits);
// Improves `assignment` in place (its count of SWA heads is kept) within polish_budget().
// `prior` (optional): each head's cost when converted alone in the full model (the ablation
// ranking), which orders the restoration pairs.
PolishResult run_polish_stage(Evaluator& ev, const SearchOptions& opt, HeadBits& assignment,
                              const std::vector<double>* prior = nullptr);

// Restoration moves of the polish: groups of SWA heads sent back to full at once (all SWA heads
// of one layer; pairs among the SWA heads whose restoration helps most), each compensated by the
// full heads cheapest to convert. For circuits that need several heads at once, where no
// single swap shows a gain.
int restoration_pairs_pool(int n_heads);

// Single-head sweep from the full model through the evaluator (N fresh evaluations at most):
// ablation = S drop, gate = squared mean log-probability change, per head.
std::vector<NamedRanking> sweep_rankings(Evaluator& ev);

// The ablations' searches (search_methods.cpp); each returns its answer, adds its stages to r.
HeadBits run_multi_search(Evaluator& ev, const SearchOptions& opt, int k_total, SearchResult& r);
HeadBits run_layer_search(Evaluator& ev, const SearchOptions& opt, int k_total, SearchResult& r);
HeadBits run_ls_search(Evaluator& ev, const SearchOptions& opt, int k_total, SearchResult& r);
// What bosch's three stages are charged at most with these options (ls's auto budget).
int64_t paper_stages_budget(const SearchOptions& opt, int n_layers, int n_heads);

// A stage's evaluation counter: fresh evaluations against its budget, plus a stall guard
// (consecutive re-requested masks) so a stage whose space is exhausted stops.
struct BudgetedEval {
  Evaluator& ev;
  int budget, stall_max;
  int used = 0, stall = 0;
  bool exhausted() const { return used >= budget || stall >= stall_max; }
  Evaluation eval(const HeadBits& b) {
    Evaluation e = ev.evaluate(b);
    if (e.fresh) ++used, stall = 0;
    else ++stall;
    return e;
  }
};

// Independent RNG stream for (seed, stage, index), so stages never share random state.
Rng stream_rng(uint64_t seed, uint64_t stage, uint64_t index);
int stall_limit(const SearchOptions& opt, int budget);

}  // namespace bosch::search
