// Stage 2: coarse ratio buckets from the stage-1 drops.
//
// The rule (fixed before any test run; docs/search.md says why): layers ordered by their drop
// (least sensitive first) are cut into B = min(buckets, L) tiers of near-equal size. Per layer,
// the near-uniform count shifted by +step in the least sensitive tier and -step in the most
// sensitive one (linearly between), step = round(min(rho, 1 - rho) H / 2) heads, at least one:
// the outer tiers sit half-way between rho and the nearer of 0 and 1. Clamped to [0, H], then
// brought back to exactly K. Each tier's SWA total is what stage 3 keeps inside its buckets.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/stages/stage_steps.h"
#include "util/error.h"

namespace bosch::search {

std::vector<double> probe_drops(const ProbeResult& probe) {
  const int L = static_cast<int>(probe.layers.size());
  std::vector<double> d(L);
  for (int l = 0; l < L; ++l) {
    const double above = l + 1 < L ? probe.layers[l + 1].best_score : 1.0;  // S^(full) = 1
    d[l] = above - probe.layers[l].best_score;
    // With the up-probe: the mean of the drops at c and c + 1 heads, the counts stage 2 assigns
    // around rho (docs/search.md).
    if (!std::isnan(probe.layers[l].up_score)) d[l] = 0.5 * (d[l] + (above - probe.layers[l].up_score));
  }
  return d;
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

int bucket_step(double ratio, int n_heads) {
  return std::max(1, static_cast<int>(std::lround(0.5 * std::min(ratio, 1.0 - ratio) * n_heads)));
}

RatioAssignment assign_ratios(const std::vector<double>& drops, int n_heads, int k_total, int n_buckets) {
  const int L = static_cast<int>(drops.size());
  check(L > 0 && n_heads > 0, "assign_ratios: no layers");
  check(k_total >= 0 && k_total <= L * n_heads, "assign_ratios: K = {} outside [0, {}]", k_total,
        L * n_heads);
  check(n_buckets >= 1, "--buckets {}: expected >= 1", n_buckets);
  RatioAssignment r;
  r.drops = drops;
  // Weights (reported, and the uniform counts' tie-break): min-max normalised drops, inverted.
  const auto [mn, mx] = std::minmax_element(drops.begin(), drops.end());
  r.weights.resize(L);
  for (int l = 0; l < L; ++l) r.weights[l] = *mx > *mn ? (*mx - drops[l]) / (*mx - *mn) : 1.0;
  // Tiers: least sensitive first (ties: the higher layer, which the cascade probed first).
  std::vector<int> order(L);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return drops[a] != drops[b] ? drops[a] < drops[b] : a > b;
  });
  const int B = std::min(n_buckets, L);
  r.tier.assign(L, 0);
  r.buckets.assign(B, {});
  for (int i = 0; i < L; ++i) {
    const int b = static_cast<int>(static_cast<int64_t>(i) * B / L);
    r.tier[order[i]] = b;
    r.buckets[b].push_back(order[i]);
  }
  for (auto& layers : r.buckets) std::sort(layers.begin(), layers.end());
  // Per-layer counts: the near-uniform ones shifted by the tier's offset, clamped to [0, H].
  const std::vector<int> uniform = uniform_counts(r.weights, n_heads, k_total);
  const double ratio = static_cast<double>(k_total) / (static_cast<double>(L) * n_heads);
  const int step = bucket_step(ratio, n_heads);
  r.counts.resize(L);
  r.targets.resize(L);
  int total = 0;
  for (int l = 0; l < L; ++l) {
    const double offset = B > 1 ? step * ((B - 1) / 2.0 - r.tier[l]) / ((B - 1) / 2.0) : 0.0;
    r.targets[l] = uniform[l] + offset;
    r.counts[l] = std::clamp(static_cast<int>(std::lround(r.targets[l])), 0, n_heads);
    total += r.counts[l];
  }
  // Back to exactly K: one head at a time, added to the layer furthest below its target (ties:
  // less sensitive first), removed from the one furthest above it (ties: more sensitive first).
  auto gap = [&](int l) { return r.targets[l] - r.counts[l]; };
  while (total != k_total) {
    const bool add = total < k_total;
    int pick = -1;
    for (int i = 0; i < L; ++i) {
      const int l = add ? order[i] : order[L - 1 - i];
      if (add ? r.counts[l] >= n_heads : r.counts[l] <= 0) continue;
      if (pick < 0 || (add ? gap(l) > gap(pick) : gap(l) < gap(pick))) pick = l;
    }
    r.counts[pick] += add ? 1 : -1;
    total += add ? 1 : -1;
  }
  return r;
}

}  // namespace bosch::search
