// Stage 3: grouped head optimisation by Large Neighbourhood Search.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "search/bosch_search.h"
#include "search/combinatorics.h"
#include "util/progress.h"

namespace bosch::search {

HeadBits initial_assignment(const ProbeResult& probe, const std::vector<int>& counts, int H) {
  const int L = static_cast<int>(counts.size());
  HeadBits bits(static_cast<size_t>(L) * H, 0);
  for (int l = 0; l < L; ++l) {
    const LayerProbe& p = probe.layers.at(l);
    // Order: the stage-1 best heads first, then the others; each part by head score (higher =
    // converting it hurt less), ties by index.
    std::vector<int> order(H);
    std::iota(order.begin(), order.end(), 0);
    std::vector<uint8_t> in_best(H, 0);
    for (int h : p.best_heads) in_best[h] = 1;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (in_best[a] != in_best[b]) return in_best[a] > in_best[b];
      return p.head_scores[a] > p.head_scores[b];
    });
    for (int i = 0; i < counts[l]; ++i) bits[static_cast<size_t>(l) * H + order[i]] = 1;
  }
  return bits;
}

namespace {

int exact_repair_limit(const SearchOptions& opt, int H) {
  return opt.exact_repair > 0 ? opt.exact_repair : 3 * H;
}

using GroupSearch = BudgetedEval;

void exhaustive_group(GroupSearch& s, const std::vector<int>& layers, int H, HeadBits& cur,
                      double& cur_loss) {
  std::vector<std::vector<std::vector<int>>> choices;
  for (int l : layers) {
    int c = 0;
    for (int h = 0; h < H; ++h) c += cur[static_cast<size_t>(l) * H + h];
    choices.push_back(all_combinations(H, c));
  }
  std::vector<size_t> digit(layers.size(), 0);
  HeadBits best = cur;
  while (true) {
    HeadBits b = cur;
    for (size_t i = 0; i < layers.size(); ++i) {
      std::fill_n(b.begin() + static_cast<size_t>(layers[i]) * H, H, 0);
      for (int h : choices[i][digit[i]]) b[static_cast<size_t>(layers[i]) * H + h] = 1;
    }
    Evaluation e = s.eval(b);
    if (e.loss < cur_loss) cur_loss = e.loss, best = b;
    size_t i = 0;
    while (i < layers.size() && ++digit[i] == choices[i].size()) digit[i++] = 0;
    if (i == layers.size()) break;
  }
  cur = best;
}

// One scan of the swaps of SWA head `t` with the full heads of its layer; applies the best one
// when it improves. Returns the (possibly moved) position of the head.
int improve_head(GroupSearch& s, int H, int t, HeadBits& cand, double& cand_loss) {
  const int l = t / H;
  int best_f = -1;
  double best_loss = cand_loss;
  HeadBits best_bits;
  for (int h = 0; h < H && !s.exhausted(); ++h) {
    const int f = l * H + h;
    if (cand[f]) continue;
    HeadBits nb = cand;
    nb[t] = 0, nb[f] = 1;
    Evaluation e = s.eval(nb);
    if (e.loss < best_loss) best_loss = e.loss, best_f = f, best_bits = std::move(nb);
  }
  if (best_f < 0) return t;
  cand = std::move(best_bits), cand_loss = best_loss;
  return best_f;
}

// Exact repair: every placement of the destroyed heads (each layer keeps its count; the heads
// that were not destroyed stay), keeping the best (strictly; the first on ties).
// `destroyed_per_layer[l]` = how many heads of layer l were destroyed (removed from `cand`).
void exact_repair(GroupSearch& s, int H, const std::vector<std::pair<int, int>>& destroyed_per_layer,
                  HeadBits& cand, double& cand_loss) {
  std::vector<std::vector<std::vector<int>>> options;  // per layer: the placements (flat heads)
  for (auto [l, d] : destroyed_per_layer) {
    std::vector<int> free;
    for (int h = 0; h < H; ++h)
      if (!cand[static_cast<size_t>(l) * H + h]) free.push_back(l * H + h);
    std::vector<std::vector<int>> opts;
    for (const auto& c : all_combinations(static_cast<int>(free.size()), d)) {
      std::vector<int> o;
      for (int i : c) o.push_back(free[i]);
      opts.push_back(std::move(o));
    }
    options.push_back(std::move(opts));
  }
  std::vector<size_t> digit(options.size(), 0);
  HeadBits best;
  double best_loss = std::numeric_limits<double>::infinity();
  while (!s.exhausted()) {
    HeadBits b = cand;
    for (size_t i = 0; i < options.size(); ++i)
      for (int f : options[i][digit[i]]) b[f] = 1;
    Evaluation e = s.eval(b);
    if (e.loss < best_loss) best_loss = e.loss, best = std::move(b);
    size_t i = 0;
    while (i < options.size() && ++digit[i] == options[i].size()) digit[i++] = 0;
    if (i == options.size()) break;
  }
  if (best.empty()) return;  // budget gone before any placement: the caller rejects cand
  cand = std::move(best);
  cand_loss = best_loss;
}

}  // namespace

GroupResult optimise_group(Evaluator& ev, const SearchOptions& opt, const std::vector<int>& layers,
                           HeadBits& assignment, uint64_t seed) {
  const int H = ev.n_heads();
  GroupResult g;
  g.layers = layers;
  GroupSearch s{ev, opt.budget_group, stall_limit(opt, opt.budget_group)};
  double cur_loss = s.eval(assignment).loss;
  g.start_loss = cur_loss;

  uint64_t space = 1;
  for (int l : layers) {
    int c = 0;
    for (int h = 0; h < H; ++h) c += assignment[static_cast<size_t>(l) * H + h];
    g.count = c;
    const uint64_t cap = static_cast<uint64_t>(opt.budget_group) + 1;
    space = std::min<uint64_t>(cap, space * n_choose_k_capped(H, c, cap));
  }
  // Exhaustive when every assignment of the group fits the budget (the start is one of them).
  if (space <= static_cast<uint64_t>(opt.budget_group)) {
    g.exhaustive = true;
    exhaustive_group(s, layers, H, assignment, cur_loss);
  } else {
    Rng rng = stream_rng(opt.seed, 3, seed);
    // Adaptive destroy size (variable neighbourhood): +1 after each iteration without
    // improvement, cycling back to the base size once it has destroyed the whole group.
    int grow = 0;
    while (!s.exhausted()) {
      ++g.lns_iterations;
      // Destroy: move d random SWA heads of the group to random full heads of their layers,
      // taken first from one random focus layer (heads of a layer interact most, and a single
      // swap cannot leave a local optimum that needs two heads of a layer to move together),
      // the rest from the other layers of the group.
      std::vector<int> focus_swa, other_swa;
      const int focus = layers[rng.below(layers.size())];
      for (int l : layers)
        for (int h = 0; h < H; ++h)
          if (assignment[static_cast<size_t>(l) * H + h]) (l == focus ? focus_swa : other_swa).push_back(l * H + h);
      const int total = static_cast<int>(focus_swa.size() + other_swa.size());
      const int base_d = std::clamp(static_cast<int>(std::lround(opt.destroy_fraction * total)),
                                    std::min(2, total), total);
      const int d = base_d + grow % (total - base_d + 1);
      std::vector<int> destroyed = rng.sample(focus_swa, static_cast<size_t>(d));
      for (int t : rng.sample(other_swa, static_cast<size_t>(d) - destroyed.size()))
        destroyed.push_back(t);
      HeadBits cand = assignment;
      // Repair. Small destroyed neighbourhoods are re-optimised exactly (all placements of the
      // destroyed heads); larger ones get random placements, then one best-swap scan per
      // moved head.
      std::map<int, int> per_layer;
      for (int t : destroyed) ++per_layer[t / H];
      uint64_t placements = 1;
      for (auto [l, dl] : per_layer) {
        int kept = -dl;
        for (int h = 0; h < H; ++h) kept += assignment[static_cast<size_t>(l) * H + h];
        placements = std::min<uint64_t>(placements * n_choose_k_capped(H - kept, dl, 1u << 20),
                                        1u << 20);
      }
      double cand_loss = std::numeric_limits<double>::infinity();
      if (placements <= static_cast<uint64_t>(exact_repair_limit(opt, H))) {
        for (int t : destroyed) cand[t] = 0;
        std::vector<std::pair<int, int>> dl(per_layer.begin(), per_layer.end());
        exact_repair(s, H, dl, cand, cand_loss);
      } else {
        std::vector<int> touched;
        for (int t : destroyed) {
          const int l = t / H;
          cand[t] = 0;  // first, so a layer whose heads are all SWA offers t itself back
          std::vector<int> free;
          for (int h = 0; h < H; ++h)
            if (!cand[static_cast<size_t>(l) * H + h]) free.push_back(l * H + h);
          const int f = free[rng.below(free.size())];
          cand[f] = 1;
          touched.push_back(f);
        }
        cand_loss = s.eval(cand).loss;
        for (int t : touched) {
          if (s.exhausted()) break;
          improve_head(s, H, t, cand, cand_loss);
        }
      }
      if (cand_loss < cur_loss) {  // accept improvements only
        assignment = std::move(cand);
        cur_loss = cand_loss;
        grow = 0;
      } else {
        ++grow;
      }
    }
  }
  g.end_loss = cur_loss;
  g.evaluations = s.used;
  return g;
}

std::vector<GroupResult> run_group_stage(Evaluator& ev, const SearchOptions& opt,
                                         const std::vector<int>& counts, HeadBits& assignment) {
  const int H = ev.n_heads();
  // Groups by count; layers with 0 or H SWA heads have nothing to choose.
  std::map<int, std::vector<int>, std::greater<int>> groups;  // easiest (most SWA) first
  for (int l = 0; l < static_cast<int>(counts.size()); ++l)
    if (counts[l] > 0 && counts[l] < H) groups[counts[l]].push_back(l);
  Progress progress("search stage 3/3 (group LNS)", groups.size() * opt.budget_group);
  ev.set_progress(&progress);
  ev.set_stage("group");
  std::vector<GroupResult> out;
  for (auto& [count, layers] : groups)
    out.push_back(optimise_group(ev, opt, layers, assignment, static_cast<uint64_t>(count)));
  ev.set_progress(nullptr);
  return out;
}

}  // namespace bosch::search
