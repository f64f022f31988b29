#include "model/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "util/error.h"

namespace bosch {

KVCache::KVCache(const ModelConfig& cfg, const AttentionPlan& plan, int64_t max_tokens)
    : cfg_(cfg), plan_(plan), capacity_(max_tokens),
      stride_pos_(static_cast<int64_t>(cfg.n_kv_heads) * cfg.head_dim) {
  check(plan.n_layers() == cfg.n_layers && plan.n_kv_heads() == cfg.n_kv_heads,
        "KV cache: attention plan is {} layers x {} KV heads, the model has {} x {}", plan.n_layers(),
        plan.n_kv_heads(), cfg.n_layers, cfg.n_kv_heads);
  check(max_tokens > 0, "KV cache: capacity must be positive, got {}", max_tokens);
  k_.resize(cfg.n_layers);
  v_.resize(cfg.n_layers);
  for (int l = 0; l < cfg.n_layers; ++l) {
    k_[l].resize(static_cast<size_t>(max_tokens * stride_pos_));
    v_[l].resize(static_cast<size_t>(max_tokens * stride_pos_));
  }
}

void KVCache::attend(int layer, const float* q, const float* k, const float* v, float* out, int n,
                     int64_t pos0) {
  check(pos0 == length_, "KV cache: new tokens start at position {}, cache holds {}", pos0, length_);
  check(pos0 + n <= capacity_, "KV cache: {} tokens exceed its capacity of {}", pos0 + n, capacity_);
  std::memcpy(&k_[layer][pos0 * stride_pos_], k, sizeof(float) * n * stride_pos_);
  std::memcpy(&v_[layer][pos0 * stride_pos_], v, sizeof(float) * n * stride_pos_);
  attention(dense_attention_args(q, k_[layer].data(), v_[layer].data(), out, n, pos0, cfg_.n_heads,
                                 cfg_.n_kv_heads, cfg_.head_dim, plan_.windows(layer), plan_.sinks_of(layer)));
}

void KVCache::commit(int64_t new_length) {
  check(new_length >= length_ && new_length <= capacity_, "KV cache: bad commit length {}",
        new_length);
  length_ = new_length;
}

int64_t KVCache::bytes() const {
  int64_t b = 0;
  for (auto& x : k_) b += static_cast<int64_t>(x.capacity() * sizeof(float));
  for (auto& x : v_) b += static_cast<int64_t>(x.capacity() * sizeof(float));
  return b;
}

}  // namespace bosch
