// The two primitives every method shares (the search, the baselines, compare): K, the exact
// number of SWA heads for a ratio, and the K lowest heads of a ranking as a mask.
#pragma once
#include <vector>

#include "search/core/objective.h"

namespace bosch::search {

// round(rho * N) of the N = n_layers * n_heads (layer, KV head) pairs.
int target_count(double ratio, int n_layers, int n_heads);

// Head level: the k heads with the LOWEST importance become SWA; ties broken by flat index
// (lower index converted first), so the result is deterministic. NaN importance is treated as
// +infinity (never converted before a real score).
// Throws Error when k is outside [0, N].
HeadBits lowest_k(const std::vector<double>& importance, int k);

}  // namespace bosch::search
