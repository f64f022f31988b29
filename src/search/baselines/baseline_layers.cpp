#include "search/baselines/baseline_layers.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/core/head_bits.h"
#include "search/core/rng.h"
#include "util/error.h"

namespace bosch::search {

HeadBits convert_layers_in_order(const std::vector<int>& order, int n_layers, int n_heads, int k) {
  check(n_layers > 0 && n_heads > 0, "layer baseline: need at least one layer and one head (got {} x {})",
        n_layers, n_heads);
  check(k >= 0 && k <= n_layers * n_heads, "layer baseline: K = {} outside [0, {}]", k, n_layers * n_heads);
  check(static_cast<int>(order.size()) == n_layers, "layer baseline: order has {} layers, expected {}",
        order.size(), n_layers);
  std::vector<uint8_t> seen(n_layers, 0);
  for (int l : order) {
    check(l >= 0 && l < n_layers && !seen[l], "layer baseline: order is not a permutation of 0..{}", n_layers - 1);
    seen[l] = 1;
  }
  HeadBits bits(static_cast<size_t>(n_layers) * n_heads, 0);
  const int whole = k / n_heads, rest = k % n_heads;
  for (int i = 0; i < whole; ++i)
    for (int h = 0; h < n_heads; ++h) bits[static_cast<size_t>(order[i]) * n_heads + h] = 1;
  for (int h = 0; h < rest; ++h) bits[static_cast<size_t>(order[whole]) * n_heads + h] = 1;
  return bits;
}

std::vector<int> random_layer_order(int n_layers, uint64_t seed) {
  std::vector<int> order(n_layers);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed ^ 0x52414e444c415952ull);  // "RANDLAYR": its own stream
  rng.shuffle(order);
  return order;
}

std::vector<int> interleaved_full_layers(int n_layers, int n_full) {
  check(n_full >= 0 && n_full <= n_layers, "INTR: {} full layers of {}", n_full, n_layers);
  std::vector<int> full;
  for (int j = 0; j < n_full; ++j)
    full.push_back(static_cast<int>((static_cast<int64_t>(j + 1) * n_layers) / n_full) - 1);
  return full;  // strictly increasing because L / f >= 1
}

std::vector<int> bme_keep_order(int n_layers) {
  std::vector<int> order;
  std::vector<uint8_t> in(n_layers, 0);
  auto push = [&](int l) {
    if (l >= 0 && l < n_layers && !in[l]) in[l] = 1, order.push_back(l);
  };
  const int mid = (n_layers - 1) / 2;
  int mid_step = 0;  // middle sequence m, m+1, m-1, m+2, m-2, ...
  auto next_middle = [&] {
    while (mid_step < 2 * n_layers + 2) {
      const int s = mid_step++;
      const int l = s == 0 ? mid : (s % 2 ? mid + (s + 1) / 2 : mid - s / 2);
      if (l >= 0 && l < n_layers && !in[l]) return push(l);
    }
  };
  for (int j = 0; static_cast<int>(order.size()) < n_layers; ++j) {
    push(j);
    next_middle();
    push(n_layers - 1 - j);
  }
  return order;
}

HeadBits random_layers_mask(int n_layers, int n_heads, int k, uint64_t seed) {
  return convert_layers_in_order(random_layer_order(n_layers, seed), n_layers, n_heads, k);
}

HeadBits interleaved_mask(int n_layers, int n_heads, int k) {
  check(k >= 0 && k <= n_layers * n_heads, "INTR: K = {} outside [0, {}]", k, n_layers * n_heads);
  const int whole = k / n_heads;
  const auto full = interleaved_full_layers(n_layers, n_layers - whole);
  std::vector<uint8_t> is_full(n_layers, 0);
  for (int l : full) is_full[l] = 1;
  std::vector<int> order;
  for (int l = 0; l < n_layers; ++l)
    if (!is_full[l]) order.push_back(l);
  order.insert(order.end(), full.begin(), full.end());  // partial remainder: lowest kept layer
  return convert_layers_in_order(order, n_layers, n_heads, k);
}

HeadBits bme_mask(int n_layers, int n_heads, int k) {
  auto order = bme_keep_order(n_layers);
  std::reverse(order.begin(), order.end());  // convert the last-kept layers first
  return convert_layers_in_order(order, n_layers, n_heads, k);
}

HeadBits random_heads_mask(int n_layers, int n_heads, int k, uint64_t seed) {
  const int n = n_layers * n_heads;
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(seed ^ 0x52414e4448454144ull);  // "RANDHEAD"
  rng.shuffle(perm);
  std::vector<double> importance(n);
  for (int i = 0; i < n; ++i) importance[perm[i]] = i;
  return lowest_k(importance, k);
}

}  // namespace bosch::search
