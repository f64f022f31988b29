#include "search/core/head_bits.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "util/error.h"

namespace bosch::search {

int target_count(double ratio, int n_layers, int n_heads) {
  return static_cast<int>(std::llround(ratio * n_layers * n_heads));
}

HeadBits lowest_k(const std::vector<double>& importance, int k) {
  const int n = static_cast<int>(importance.size());
  check(k >= 0 && k <= n, "ranking baseline: K = {} outside [0, {}]", k, n);
  std::vector<int> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  auto key = [&](int i) {
    const double v = importance[i];
    return std::isnan(v) ? INFINITY : v;
  };
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return key(a) < key(b); });
  HeadBits bits(n, 0);
  for (int i = 0; i < k; ++i) bits[idx[i]] = 1;
  return bits;
}

}  // namespace bosch::search
