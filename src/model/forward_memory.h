// Before samples of a length are made: can a forward pass over that many tokens fit? A lower
// bound of its activations (the hidden state and its norm, the larger of one layer's q/k/v/
// attention rows and its MLP rows, in float32), checked against what the machine has, so a
// --lengths the flags admit but the machine cannot hold fails at once, naming the length,
// instead of after minutes of sample generation (issue #40).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/config.h"
#include "util/memory_budget.h"

namespace bosch {

inline uint64_t forward_bytes_lower_bound(const ModelConfig& c, int64_t tokens) {
  const uint64_t attn = uint64_t(2) * c.n_heads * c.head_dim + uint64_t(2) * c.n_kv_heads * c.head_dim;
  const uint64_t mlp = uint64_t(2) * static_cast<uint64_t>(c.is_moe() ? c.d_ff_expert : c.d_ff);
  return uint64_t(4) * static_cast<uint64_t>(tokens) * (uint64_t(2) * c.d_model + std::max(attn, mlp));
}

inline void check_forward_memory(const ModelConfig& c, const std::vector<int>& lengths, const std::string& flag) {
  for (int n : lengths) check_memory_for(forward_bytes_lower_bound(c, n), fmt::format("{} {}: a forward pass over {} tokens", flag, n, n));
}

}  // namespace bosch
