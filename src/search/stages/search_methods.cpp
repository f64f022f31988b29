// The search methods beside the paper's three stages: the method list, bosch-plus's starting
// rankings (one single-head sweep through the evaluator), and the paper's two ablations that
// are searches of their own (bosch-multi, bosch-layer). bosch-single is stage 1's answer, read
// off the same run as bosch (bosch_search.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/core/head_bits.h"
#include "search/stages/stage_steps.h"
#include "search/core/combinatorics.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch::search {

const std::vector<std::string>& search_methods() {
  static const std::vector<std::string> m = {"bosch", "bosch-plus", "bosch-single", "bosch-multi", "bosch-layer", "ls"};
  return m;
}

bool is_search_method(const std::string& name) {
  const auto& m = search_methods();
  return std::find(m.begin(), m.end(), name) != m.end();
}

const SearchResult::Milestone* SearchResult::milestone(const std::string& m) const {
  for (const auto& x : milestones)
    if (x.method == m) return &x;
  return nullptr;
}

std::vector<NamedRanking> sweep_rankings(Evaluator& ev) {
  const size_t N = ev.n_bits();
  ev.set_stage("sweep");
  Progress progress("search starts (single-head sweep)", N);
  ev.set_progress(&progress);
  const MaskScore full = ev.evaluate(HeadBits(N, 0)).raw;
  std::vector<MaskScore> single(N);
  bool has_logprob = full.mean_logprob != 0;
  for (size_t i = 0; i < N; ++i) {
    HeadBits b(N, 0);
    b[i] = 1;
    single[i] = ev.evaluate(b).raw;
    has_logprob = has_logprob || single[i].mean_logprob != 0;
  }
  ev.set_progress(nullptr);
  NamedRanking ablation{"ablation", std::vector<double>(N)}, gate{"gate", std::vector<double>(N)};
  for (size_t i = 0; i < N; ++i) {
    ablation.importance[i] = full.value - single[i].value;
    const double d = has_logprob ? full.mean_logprob - single[i].mean_logprob : full.value - single[i].value;
    gate.importance[i] = d * d;
  }
  return {ablation, gate};
}

namespace {

// Whole layers `swa_layers` SWA, plus `rem` heads (lowest indices) of layer `partial` (-1: none).
HeadBits layer_mask(const std::vector<int>& swa_layers, int partial, int rem, int L, int H) {
  HeadBits b(static_cast<size_t>(L) * H, 0);
  for (int l : swa_layers) std::fill_n(b.begin() + static_cast<size_t>(l) * H, H, 1);
  if (partial >= 0) std::fill_n(b.begin() + static_cast<size_t>(partial) * H, rem, 1);
  return b;
}

}  // namespace

HeadBits run_multi_search(Evaluator& ev, const SearchOptions& opt, int k_total, SearchResult& r) {
  const int L = ev.n_layers(), H = ev.n_heads();
  // Uniform counts (floor(K/L) per layer, one more for the K mod L top layers: equal weights),
  // random heads in each layer, then one LNS bucket over every layer (heads move between all
  // layers).
  const std::vector<int> counts = uniform_counts(std::vector<double>(L, 1.0), H, k_total);
  Rng rng = stream_rng(opt.seed, 7, 0);
  HeadBits bits(static_cast<size_t>(L) * H, 0);
  for (int l = 0; l < L; ++l) {
    std::vector<int> heads(H);
    std::iota(heads.begin(), heads.end(), 0);
    for (int h : rng.sample(heads, counts[l])) bits[static_cast<size_t>(l) * H + h] = 1;
  }
  SearchOptions o = opt;
  o.budget_group = opt.budget_multi > 0 ? opt.budget_multi : static_cast<int>(4 * ev.n_bits());
  std::vector<int> layers(L);
  std::iota(layers.begin(), layers.end(), 0);
  GroupResult g = optimise_group(ev, o, layers, bits, opt.seed);
  r.ratios.counts = counts;
  r.ratios.buckets = {layers};
  r.groups.push_back(g);
  return bits;
}

int64_t paper_stages_budget(const SearchOptions& opt, int L, int H) {
  const int c = probe_count(opt.ratio, H);
  const int64_t probes = std::min<int64_t>(opt.budget_probe, static_cast<int64_t>(n_choose_k_capped(H, c, 1u << 30)));
  // Stage 3 at the buckets' sizes stage 2 would give (their sizes do not depend on the drops).
  const RatioAssignment tiers = assign_ratios(std::vector<double>(L, 0.0), H, target_count(opt.ratio, L, H), opt.buckets);
  std::vector<int> bucket_heads;
  for (const auto& b : tiers.buckets) bucket_heads.push_back(static_cast<int>(b.size()) * H);
  // References (2), probes, stage 2's start and guard (2), stage 3.
  return 2 + static_cast<int64_t>(L) * probes + 2 + stage3_budgets(opt, bucket_heads, L * H, tiers.buckets.size() > 1).total();
}

HeadBits run_ls_search(Evaluator& ev, const SearchOptions& opt, int k_total, SearchResult& r) {
  const int N = static_cast<int>(ev.n_bits());
  const int64_t budget = opt.budget_ls > 0 ? opt.budget_ls : paper_stages_budget(opt, ev.n_layers(), ev.n_heads());
  // Start: the best top-K mask among the sweep's rankings (ablation, gate) and the caller's.
  std::vector<NamedRanking> rankings = sweep_rankings(ev);
  rankings.insert(rankings.end(), opt.starts.begin(), opt.starts.end());
  ev.set_stage("ls");
  Progress progress("search (swap local search)", static_cast<size_t>(std::max<int64_t>(0, budget - ev.fresh())));
  ev.set_progress(&progress);
  HeadBits cur;
  double cur_loss = INFINITY;
  for (const auto& rk : rankings) {
    HeadBits b = lowest_k(rk.importance, k_total);
    const double loss = ev.evaluate(b).loss;
    if (loss < cur_loss) cur_loss = loss, cur = std::move(b), r.start_chosen = rk.name;
  }
  // Plain swap local search: every (SWA head, full head) swap in a random order, the first
  // strict improvement taken, a new order after each; ends at the budget or a local optimum.
  Rng rng = stream_rng(opt.seed, 8, 0);
  const int left = static_cast<int>(std::clamp<int64_t>(budget - ev.fresh(), 0, 1 << 30));
  BudgetedEval s{ev, left, stall_limit(opt, static_cast<int>(std::min<int64_t>(budget, 1 << 24)))};
  bool improved = true;
  while (improved && !s.exhausted()) {
    improved = false;
    std::vector<std::pair<int, int>> swaps;
    for (int t = 0; t < N; ++t)
      for (int f = 0; f < N; ++f)
        if (cur[t] && !cur[f]) swaps.push_back({t, f});
    rng.shuffle(swaps);
    for (auto [t, f] : swaps) {
      if (s.exhausted()) break;
      HeadBits b = cur;
      b[t] = 0, b[f] = 1;
      const Evaluation e = s.eval(b);
      if (e.loss < cur_loss) {
        cur = std::move(b), cur_loss = e.loss, improved = true;
        break;
      }
    }
  }
  ev.set_progress(nullptr);
  r.ratios.counts = layer_counts(cur, ev.n_heads());
  return cur;
}

HeadBits run_layer_search(Evaluator& ev, const SearchOptions& opt, int k_total, SearchResult& r) {
  const int L = ev.n_layers(), H = ev.n_heads();
  const int m = k_total / H, rem = k_total % H;
  const int budget = opt.budget_layer >= 0 ? opt.budget_layer : L * L;
  BudgetedEval s{ev, budget, stall_limit(opt, budget)};
  ev.set_stage("layers");
  Progress progress("search (layer granularity)", static_cast<size_t>(budget));
  ev.set_progress(&progress);
  HeadBits best;
  double best_loss = INFINITY;
  auto consider = [&](const std::vector<int>& swa, int partial) {
    const HeadBits b = layer_mask(swa, partial, rem, L, H);
    const double loss = s.eval(b).loss;
    if (loss < best_loss) best_loss = loss, best = b;
  };
  // Exhaustive when every (set of m layers, partial layer) fits the budget.
  const uint64_t sets = n_choose_k_capped(L, m, static_cast<uint64_t>(budget));
  if (sets * static_cast<uint64_t>(rem ? L - m : 1) <= static_cast<uint64_t>(budget)) {
    for (const auto& swa : all_combinations(L, m)) {
      if (!rem) {
        consider(swa, -1);
        continue;
      }
      std::vector<uint8_t> used(L, 0);
      for (int l : swa) used[l] = 1;
      for (int p = 0; p < L; ++p)
        if (!used[p]) consider(swa, p);
    }
  } else {
    // Greedy cascade: convert the layer that hurts least on top of those already converted
    // (ties: the higher layer, as the paper's top-down order), then the partial layer, then
    // swaps of a converted layer with a full one while the budget lasts.
    std::vector<int> swa;
    std::vector<uint8_t> in(L, 0);
    for (int step = 0; step < m && !s.exhausted(); ++step) {
      int pick = -1;
      double pick_loss = INFINITY;
      for (int l = L - 1; l >= 0 && !s.exhausted(); --l) {
        if (in[l]) continue;
        std::vector<int> t = swa;
        t.push_back(l);
        const double loss = s.eval(layer_mask(t, -1, 0, L, H)).loss;
        if (loss < pick_loss) pick_loss = loss, pick = l;
      }
      if (pick < 0) break;
      swa.push_back(pick), in[pick] = 1;
    }
    for (int l = L - 1; static_cast<int>(swa.size()) < m && l >= 0; --l)  // budget ran out
      if (!in[l]) swa.push_back(l), in[l] = 1;
    int partial = -1;
    if (rem) {
      for (int p = L - 1; p >= 0; --p)
        if (!in[p] && (partial < 0 || !s.exhausted())) {
          const double loss = s.eval(layer_mask(swa, p, rem, L, H)).loss;
          if (partial < 0 || loss < best_loss) best_loss = loss, partial = p;
        }
    }
    best = layer_mask(swa, partial, rem, L, H);
    best_loss = s.eval(best).loss;
    for (bool improved = true; improved && !s.exhausted();) {
      improved = false;
      for (size_t i = 0; i < swa.size() && !improved && !s.exhausted(); ++i)
        for (int f = 0; f < L && !improved && !s.exhausted(); ++f) {
          if (in[f] || f == partial) continue;
          std::vector<int> t = swa;
          t[i] = f;
          const HeadBits b = layer_mask(t, partial, rem, L, H);
          const double loss = s.eval(b).loss;
          if (loss < best_loss) {
            in[swa[i]] = 0, in[f] = 1, swa = t, best = b, best_loss = loss, improved = true;
          }
        }
    }
  }
  ev.set_progress(nullptr);
  r.ratios.counts = layer_counts(best, H);
  return best;
}

}  // namespace bosch::search
