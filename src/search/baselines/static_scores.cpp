// Single-head sweeps through the calibration Objective, and HeadScores serialisation.
#include <cmath>
#include <memory>

#include "search/baselines/static_scores.h"
#include "util/error.h"
#include "util/progress.h"

namespace bosch::search {

nlohmann::json HeadScores::to_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (int l = 0; l < n_layers; ++l) {
    nlohmann::json row = nlohmann::json::array();
    for (int h = 0; h < n_heads; ++h) row.push_back(at(l, h));
    j.push_back(row);
  }
  return j;
}

SingleHeadSweep single_head_sweep(Objective& obj) {
  const int L = obj.n_layers(), H = obj.n_heads(), N = L * H;
  check(N > 0, "single-head sweep: the objective has no heads");
  SingleHeadSweep r;
  r.ablation = {L, H, std::vector<double>(N, 0)};
  r.gate = r.ablation;
  HeadBits bits(N, 0);
  r.full = obj.evaluate(bits);
  r.single.resize(N);
  Progress progress("single-head sweep", N);
  for (int i = 0; i < N; ++i) {
    bits[i] = 1;
    r.single[i] = obj.evaluate(bits);
    bits[i] = 0;
    progress.add();
  }
  progress.finish();
  r.evaluations = N + 1;
  bool any_lp = r.full.mean_logprob != 0;
  for (const auto& s : r.single) any_lp = any_lp || s.mean_logprob != 0;
  r.gate_uses_logprob = any_lp;
  for (int i = 0; i < N; ++i) {
    r.ablation.values[i] = r.full.value - r.single[i].value;
    const double d = any_lp ? r.full.mean_logprob - r.single[i].mean_logprob : r.full.value - r.single[i].value;
    r.gate.values[i] = d * d;
  }
  return r;
}

}  // namespace bosch::search
