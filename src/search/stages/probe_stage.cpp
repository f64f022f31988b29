// Stage 1: cascaded layer-importance probes, top layer to bottom.
#include <algorithm>
#include <cmath>
#include <limits>

#include "search/stages/stage_steps.h"
#include "search/core/combinatorics.h"
#include "util/progress.h"

namespace bosch::search {

namespace {

struct LayerSearch {
  LayerSearch(Evaluator& e, const HeadBits& b, int l, int h, int bud, int stall_lim)
      : ev(e), base(b), layer(l), n_heads(h), budget(bud), stall_max(stall_lim),
        score_sum(h, 0.0), score_n(h, 0) {}
  Evaluator& ev;
  const HeadBits& base;  // cascade so far (this layer all full)
  int layer, n_heads;
  int budget, stall_max;
  int used = 0, stall = 0;
  double best_loss = std::numeric_limits<double>::infinity();
  double best_score = 0;
  std::vector<int> best;
  std::vector<double> score_sum;
  std::vector<int> score_n;

  bool exhausted() const { return used >= budget || stall >= stall_max; }

  // Loss of converting `heads` of this layer on top of the base.
  double eval(const std::vector<int>& heads) {
    HeadBits b = base;
    for (int h : heads) b[static_cast<size_t>(layer) * n_heads + h] = 1;
    Evaluation e = ev.evaluate(b);
    if (e.fresh) {
      ++used;
      stall = 0;
      for (int h : heads) score_sum[h] += e.score, ++score_n[h];
    } else {
      ++stall;
    }
    // Strict improvement: ties keep the earlier candidate, which makes the order explicit.
    if (e.loss < best_loss) best_loss = e.loss, best_score = e.score, best = heads;
    return e.loss;
  }
};

std::vector<int> random_subset(Rng& rng, int n, int k) {
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  auto s = rng.sample(all, k);
  std::sort(s.begin(), s.end());
  return s;
}

// Swap hill climbing (first improvement, random move order) with random restarts.
void local_search(LayerSearch& s, int c, Rng& rng) {
  std::vector<int> cur = random_subset(rng, s.n_heads, c);
  double cur_loss = s.eval(cur);
  while (!s.exhausted()) {
    std::vector<uint8_t> in(s.n_heads, 0);
    for (int h : cur) in[h] = 1;
    std::vector<std::pair<int, int>> moves;  // (index in cur, head to bring in)
    for (int i = 0; i < c; ++i)
      for (int h = 0; h < s.n_heads; ++h)
        if (!in[h]) moves.push_back({i, h});
    rng.shuffle(moves);
    bool improved = false;
    for (auto [i, h] : moves) {
      if (s.exhausted()) return;
      std::vector<int> nb = cur;
      nb[i] = h;
      std::sort(nb.begin(), nb.end());
      double l = s.eval(nb);
      if (l < cur_loss) {
        cur = nb, cur_loss = l, improved = true;
        break;
      }
    }
    if (!improved && !s.exhausted()) {  // local optimum: restart
      cur = random_subset(rng, s.n_heads, c);
      cur_loss = s.eval(cur);
    }
  }
}

}  // namespace

ProbeResult run_probe_stage(Evaluator& ev, const SearchOptions& opt) {
  const int L = ev.n_layers(), H = ev.n_heads();
  ProbeResult res;
  res.count = probe_count(opt.ratio, H);
  res.layers.resize(L);
  res.cascade.assign(ev.n_bits(), 0);
  const int c = res.count;
  const uint64_t combos = n_choose_k_capped(H, c, static_cast<uint64_t>(opt.budget_probe));
  const bool exhaustive = combos <= static_cast<uint64_t>(opt.budget_probe);
  Progress progress("search stage 1/3 (layer probes)",
                    static_cast<size_t>(L) * ((exhaustive ? combos : opt.budget_probe) + (c < H ? 1 : 0)));
  ev.set_progress(&progress);
  ev.set_stage("probe");
  for (int l = L - 1; l >= 0; --l) {
    LayerSearch s(ev, res.cascade, l, H, opt.budget_probe, stall_limit(opt, opt.budget_probe));
    if (c == 0) {
      s.eval({});
    } else if (exhaustive) {
      for (const auto& comb : all_combinations(H, c)) s.eval(comb);
    } else {
      Rng rng = stream_rng(opt.seed, 1, static_cast<uint64_t>(l));
      local_search(s, c, rng);
    }
    LayerProbe& p = res.layers[l];
    p.layer = l;
    p.best_heads = s.best;
    p.best_score = s.best_score;
    p.evaluations = s.used;
    p.exhaustive = exhaustive;
    p.head_scores.resize(H);
    for (int h = 0; h < H; ++h)
      p.head_scores[h] = s.score_n[h] ? s.score_sum[h] / s.score_n[h]
                                      : -std::numeric_limits<double>::infinity();
    // The up-probe: stage 2 may give a layer more SWA heads than c, which the probes never
    // tried (at rho 0.875 with H = 4, half the layers must go whole: a layer that needs one
    // full head drops 0 at c = 3 and everything at 4). One evaluation per layer.
    if (c < H && !s.best.empty()) {
      int next = -1;
      for (int h = 0; h < H; ++h)
        if (std::find(s.best.begin(), s.best.end(), h) == s.best.end() &&
            (next < 0 || p.head_scores[h] > p.head_scores[next]))
          next = h;
      HeadBits b = res.cascade;
      for (int h : s.best) b[static_cast<size_t>(l) * H + h] = 1;
      b[static_cast<size_t>(l) * H + next] = 1;
      const Evaluation e = ev.evaluate(b);
      p.up_score = e.score;
      p.evaluations += e.fresh ? 1 : 0;
    }
    for (int h : s.best) res.cascade[static_cast<size_t>(l) * H + h] = 1;
  }
  ev.set_progress(nullptr);
  return res;
}

}  // namespace bosch::search
