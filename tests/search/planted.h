// Planted synthetic instances shared by the search tests.
#pragma once
#include <algorithm>
#include <vector>

#include "search/core/rng.h"
#include "search/objectives/synthetic_objective.h"

namespace bosch::search::testing {

// Layer l of H heads where converting `free_heads` costs little (free_cost) and every other
// head costs about `cost`. Decoys are cheaper alone (0.01) but cost 2 * `cost` more when
// converted together with any free head, so a ranking by single-head cost picks them first and
// is wrong; the planted optimum is the free heads.
struct PlantedLayer {
  std::vector<int> free_heads;
  std::vector<int> decoys;
  double cost = 1.0;
  double free_cost = 0.02;  // converting a free head costs a little (more than a decoy alone)
};

inline SyntheticObjective make_planted(int H, const std::vector<PlantedLayer>& layers,
                                       std::vector<PairTerm> extra_pairs = {}, uint64_t seed = 7) {
  const int L = static_cast<int>(layers.size());
  Rng rng(seed);
  std::vector<double> unary(L * H);
  std::vector<PairTerm> pairs = std::move(extra_pairs);
  for (int l = 0; l < L; ++l) {
    const auto& p = layers[l];
    for (int h = 0; h < H; ++h) {
      const bool is_free = std::count(p.free_heads.begin(), p.free_heads.end(), h) > 0;
      const bool decoy = std::count(p.decoys.begin(), p.decoys.end(), h) > 0;
      // Distinct costs so the optimum is unique.
      unary[l * H + h] = is_free ? p.free_cost : decoy ? 0.01 : p.cost * (1.0 + 0.1 * double(rng.below(1000)) / 1000);
      if (decoy)
        for (int f : p.free_heads) pairs.push_back({l * H + h, l * H + f, 2 * p.cost});
    }
  }
  return SyntheticObjective(L, H, std::move(unary), std::move(pairs));
}

inline HeadBits planted_bits(int H, const std::vector<PlantedLayer>& layers) {
  HeadBits b(layers.size() * H, 0);
  for (size_t l = 0; l < layers.size(); ++l)
    for (int h : layers[l].free_heads) b[l * H + h] = 1;
  return b;
}

// Brute-force optimum over all masks with exactly k ones (N <= 24), for reference.
inline HeadBits brute_force_best(const SyntheticObjective& obj, int k) {
  const int n = obj.n_layers() * obj.n_heads();
  HeadBits best;
  double best_v = -1e300;
  if (k == 0) return HeadBits(n, 0);
  for (uint32_t m = (1u << k) - 1; m < (1u << n);) {
    HeadBits b(n);
    for (int i = 0; i < n; ++i) b[i] = (m >> i) & 1;
    const double v = obj.value(b);
    if (v > best_v) best_v = v, best = b;
    const uint32_t c = m & -m, r = m + c;  // Gosper's hack: next mask with k ones
    m = (((r ^ m) >> 2) / c) | r;
  }
  return best;
}

}  // namespace bosch::search::testing
