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

#include "search/bosch_search.h"
#include "util/progress.h"

namespace bosch::search {

int polish_misses_limit(int n_heads) { return std::max(4, 2 * n_heads); }

int polish_budget(const SearchOptions& opt, size_t n_bits) {
  return opt.budget_polish >= 0 ? opt.budget_polish : static_cast<int>(2 * n_bits);
}

PolishResult run_polish_stage(Evaluator& ev, const SearchOptions& opt, HeadBits& assignment) {
  PolishResult r;
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
    if (accepted == 0) break;
  }
  ev.set_progress(nullptr);
  r.end_loss = cur_loss;
  return r;
}

}  // namespace bosch::search
