// Cross-layer polish (our addition after the paper's three stages): swaps that move one SWA
// head to another layer. Stages 2 and 3 fix every layer's count from the stage-1 drops, and
// the drops are measured at c = ceil(rho*H) heads per layer in a cascade, so a layer that
// needs more than H - c full heads (three key heads in one layer) or that the cascade made
// look decisive keeps a wrong count that no within-group move can change.
//
// A round: the marginal of every head at the current assignment (flip it alone: a SWA head
// back to full, a full head to SWA), then swaps (SWA head t back to full, full head f to
// SWA) tried in order of the predicted change marginal(t) + marginal(f), accepting strict
// improvements; heads moved in a round are not moved again before their marginals are
// re-measured. A round ends after misses_limit consecutive rejected swaps; the stage ends
// when a round accepts nothing or the budget is spent. Deterministic (no random draws).
#include <algorithm>
#include <limits>
#include <tuple>

#include "search/stages/stage_steps.h"
#include "util/progress.h"

namespace bosch::search {

int polish_misses_limit(int n_heads) { return std::max(4, 2 * n_heads); }

int polish_budget(const SearchOptions& opt, size_t n_bits) {
  return opt.budget_polish >= 0 ? opt.budget_polish : static_cast<int>(2 * n_bits);
}

int restoration_pairs_pool(int n_heads) { return std::max(4, n_heads); }

namespace {

// Candidates: every layer's SWA heads together, then pairs among the `pool` SWA heads whose
// single restoration helps most; each compensated by the full heads (outside the group) with
// the smallest conversion marginals, so the count of SWA heads is kept. Tried in order of
// predicted change; the first strict improvement is taken. Returns 1 when one was.
template <class Eval, class Exhausted>
int restore_groups(HeadBits& assignment, const std::vector<double>& marginal, const std::vector<double>* prior,
                   double& cur_loss, Eval& eval, Exhausted& exhausted, PolishResult& r) {
  const int N = static_cast<int>(assignment.size());
  const int H = N / std::max(1, static_cast<int>(r.layers));
  const double unknown = std::numeric_limits<double>::infinity();
  std::vector<int> swa, full;
  for (int i = 0; i < N; ++i)
    if (marginal[i] < unknown) (assignment[i] ? swa : full).push_back(i);
  std::stable_sort(swa.begin(), swa.end(), [&](int a, int b) { return marginal[a] < marginal[b]; });
  std::stable_sort(full.begin(), full.end(), [&](int a, int b) { return marginal[a] < marginal[b]; });
  std::vector<std::vector<int>> groups;
  for (int l = 0; l * H < N; ++l) {
    std::vector<int> g;
    for (int t : swa)
      if (t / H == l) g.push_back(t);
    if (g.size() >= 2) groups.push_back(g);
  }
  // Pairs: single marginals cannot see an AND circuit (restoring one of its heads gains
  // nothing), so with a prior (each head's cost when converted alone in the full model) the
  // pool is the SWA heads that cost most alone; without one, those whose restoration helps most.
  std::vector<int> by_prior = swa;
  if (prior)
    std::stable_sort(by_prior.begin(), by_prior.end(), [&](int a, int b) { return (*prior)[a] > (*prior)[b]; });
  const int pool = std::min<int>(static_cast<int>(swa.size()), restoration_pairs_pool(H));
  for (int a = 0; a < pool; ++a)
    for (int b = a + 1; b < pool; ++b)
      if (by_prior[a] / H != by_prior[b] / H) groups.push_back({by_prior[a], by_prior[b]});
  std::vector<std::pair<double, HeadBits>> cands;
  for (const auto& g : groups) {
    if (g.size() > full.size()) continue;
    HeadBits cand = assignment;
    double predicted = 0;
    for (int t : g) cand[t] = 0, predicted += marginal[t];
    for (size_t i = 0; i < g.size(); ++i) cand[full[i]] = 1, predicted += marginal[full[i]];
    cands.emplace_back(predicted, std::move(cand));
  }
  std::stable_sort(cands.begin(), cands.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [predicted, cand] : cands) {
    if (exhausted()) break;
    const Evaluation e = eval(cand);
    if (e.loss < cur_loss) {
      for (int i = 0; i < N; ++i)
        if (assignment[i] != cand[i]) r.restored.push_back(i);
      assignment = std::move(cand);
      cur_loss = e.loss;
      ++r.restorations;
      return 1;
    }
  }
  return 0;
}

}  // namespace

PolishResult run_polish_stage(Evaluator& ev, const SearchOptions& opt, HeadBits& assignment,
                              const std::vector<double>* prior) {
  PolishResult r;
  r.layers = ev.n_layers();
  const int N = static_cast<int>(assignment.size());
  const int H = ev.n_heads();
  const int budget = polish_budget(opt, assignment.size());
  const int stall_max = stall_limit(opt, budget);
  int stall = 0;
  auto exhausted = [&] { return r.evaluations >= budget || stall >= stall_max; };
  auto eval = [&](const HeadBits& b) {
    Evaluation e = ev.evaluate(b);
    if (e.fresh) ++r.evaluations, stall = 0;
    else ++stall;
    return e;
  };
  Progress progress("search polish (cross-layer swaps)", static_cast<size_t>(budget));
  ev.set_progress(&progress);
  ev.set_stage("polish");
  double cur_loss = eval(assignment).loss;
  r.start_loss = cur_loss;
  const double unknown = std::numeric_limits<double>::infinity();
  while (budget > 0 && !exhausted()) {
    ++r.rounds;
    std::vector<double> marginal(N, unknown);
    for (int i = 0; i < N && !exhausted(); ++i) {
      HeadBits b = assignment;
      b[i] ^= 1;
      marginal[i] = eval(b).loss - cur_loss;
    }
    std::vector<std::tuple<double, int, int>> swaps;  // (predicted change, t, f)
    for (int t = 0; t < N; ++t)
      for (int f = 0; f < N; ++f)
        if (assignment[t] && !assignment[f] && marginal[t] < unknown && marginal[f] < unknown)
          swaps.emplace_back(marginal[t] + marginal[f], t, f);
    std::sort(swaps.begin(), swaps.end());  // ties: lower t, then lower f
    std::vector<uint8_t> moved(N, 0);
    int accepted = 0, misses = 0;
    for (const auto& [predicted, t, f] : swaps) {
      if (exhausted() || misses >= polish_misses_limit(H)) break;
      if (moved[t] || moved[f]) continue;
      HeadBits cand = assignment;
      cand[t] = 0, cand[f] = 1;
      const Evaluation e = eval(cand);
      if (e.loss < cur_loss) {
        assignment = std::move(cand);
        cur_loss = e.loss;
        moved[t] = moved[f] = 1;
        ++accepted, misses = 0;
        r.moves.push_back({t, f});
      } else {
        ++misses;
      }
    }
    // Restorations: where no single swap helped, a group of SWA heads back to full at once.
    if (accepted == 0) accepted = restore_groups(assignment, marginal, prior, cur_loss, eval, exhausted, r);
    if (accepted == 0) break;
  }
  ev.set_progress(nullptr);
  r.end_loss = cur_loss;
  return r;
}

}  // namespace bosch::search
