// Small combinatorics helpers for the search (header-only).
#pragma once
#include <cstdint>
#include <vector>

namespace bosch::search {

// C(n, k), saturating at `cap` (so callers can ask "does it fit in the budget?" without overflow).
inline uint64_t n_choose_k_capped(int n, int k, uint64_t cap) {
  if (k < 0 || k > n) return 0;
  if (k > n - k) k = n - k;
  uint64_t r = 1;
  for (int i = 1; i <= k; ++i) {
    // r * (n - k + i) / i is exact at every step (r is C(n-k+i-1, i-1)).
    unsigned __int128 v = static_cast<unsigned __int128>(r) * (n - k + i) / i;
    if (v > cap) return cap + 1;
    r = static_cast<uint64_t>(v);
  }
  return r;
}

// All k-subsets of {0..n-1} in lexicographic order.
inline std::vector<std::vector<int>> all_combinations(int n, int k) {
  std::vector<std::vector<int>> out;
  if (k < 0 || k > n) return out;
  std::vector<int> c(k);
  for (int i = 0; i < k; ++i) c[i] = i;
  while (true) {
    out.push_back(c);
    int i = k - 1;
    while (i >= 0 && c[i] == n - k + i) --i;
    if (i < 0) break;
    ++c[i];
    for (int j = i + 1; j < k; ++j) c[j] = c[j - 1] + 1;
  }
  return out;
}

}  // namespace bosch::search
