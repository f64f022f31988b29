// Stage 2: adaptive per-layer ratios from the stage-1 drops.
#include <algorithm>
#include <cmath>

#include "search/bosch_search.h"
#include "util/error.h"

namespace bosch::search {

std::vector<double> probe_drops(const ProbeResult& probe) {
  const int L = static_cast<int>(probe.layers.size());
  std::vector<double> d(L);
  for (int l = 0; l < L; ++l) {
    const double above = l + 1 < L ? probe.layers[l + 1].best_score : 1.0;  // S^(full) = 1
    d[l] = above - probe.layers[l].best_score;
  }
  return d;
}

RatioAssignment assign_ratios(const std::vector<double>& drops, int n_heads, int k_total) {
  const int L = static_cast<int>(drops.size());
  check(L > 0 && n_heads > 0, "assign_ratios: no layers");
  check(k_total >= 0 && k_total <= L * n_heads, "assign_ratios: K = {} outside [0, {}]", k_total,
        L * n_heads);
  RatioAssignment r;
  r.drops = drops;
  // Weights: min-max normalised drops, inverted (the layer that lost least gets 1).
  const auto [mn, mx] = std::minmax_element(drops.begin(), drops.end());
  r.weights.resize(L);
  for (int l = 0; l < L; ++l) r.weights[l] = *mx > *mn ? (*mx - drops[l]) / (*mx - *mn) : 1.0;
  // Targets: proportional to the weights, capped at H heads, summing to K (water-filling: find
  // the scale c with sum_l min(H, c * w_l) = K by bisection). Layers of weight 0 (the most
  // sensitive) get no SWA head unless K cannot be reached without them. Then each target is
  // rounded to its nearest bucket {0, 1, ..., H} heads (ratio buckets {0, 1/H, ..., 1}).
  auto filled = [&](double c) {
    double s = 0;
    for (double w : r.weights) s += std::min<double>(n_heads, c * w);
    return s;
  };
  double lo = 0, hi = 1;
  while (filled(hi) < k_total && hi < 1e12) hi *= 2;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (filled(mid) < k_total ? lo : hi) = mid;
  }
  r.targets.resize(L);
  r.counts.resize(L);
  int total = 0;
  for (int l = 0; l < L; ++l) {
    r.targets[l] = std::min<double>(n_heads, hi * r.weights[l]);
    r.counts[l] = std::clamp(static_cast<int>(std::floor(r.targets[l] + 0.5)), 0, n_heads);
    total += r.counts[l];
  }
  // Move single layers to the adjacent bucket until the total is exactly K: up the layer
  // furthest below its target (ties: less sensitive first, then lower index), down the layer
  // furthest above it (ties: more sensitive first, then higher index). Both rules keep the
  // buckets monotone in the weights.
  while (total < k_total) {
    int pick = -1;
    for (int l = 0; l < L; ++l) {
      if (r.counts[l] >= n_heads) continue;
      if (pick < 0) { pick = l; continue; }
      const double gl = r.targets[l] - r.counts[l], gp = r.targets[pick] - r.counts[pick];
      if (gl > gp || (gl == gp && r.weights[l] > r.weights[pick])) pick = l;
    }
    ++r.counts[pick], ++total;
  }
  while (total > k_total) {
    int pick = -1;
    for (int l = 0; l < L; ++l) {
      if (r.counts[l] <= 0) continue;
      if (pick < 0) { pick = l; continue; }
      const double gl = r.targets[l] - r.counts[l], gp = r.targets[pick] - r.counts[pick];
      if (gl < gp || (gl == gp && r.weights[l] <= r.weights[pick])) pick = l;
    }
    --r.counts[pick], --total;
  }
  return r;
}

std::vector<int> uniform_counts(const std::vector<double>& weights, int n_heads, int k_total) {
  const int L = static_cast<int>(weights.size());
  check(L > 0 && k_total >= 0 && k_total <= L * n_heads, "uniform_counts: K = {} outside [0, {}]", k_total,
        L * n_heads);
  std::vector<int> order(L), counts(L, k_total / L);
  for (int l = 0; l < L; ++l) order[l] = l;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weights[a] > weights[b]; });
  for (int i = 0; i < k_total % L; ++i) ++counts[order[i]];
  return counts;
}

}  // namespace bosch::search
