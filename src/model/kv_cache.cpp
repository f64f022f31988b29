#include "model/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "util/error.h"
#include "util/memory_budget.h"

namespace bosch {

KvType parse_kv_type(const std::string& name) {
  if (name == "f32") return KvType::F32;
  if (name == "f16") return KvType::F16;
  fail("KV cache type '{}': expected f32 or f16", name);
}

const char* kv_type_name(KvType t) { return t == KvType::F16 ? "f16" : "f32"; }

KVCache::KVCache(const ModelConfig& cfg, const AttentionPlan& plan, int64_t max_tokens, KvType type)
    : cfg_(cfg), plan_(plan), type_(type), capacity_(max_tokens),
      stride_pos_(static_cast<int64_t>(cfg.n_kv_heads) * cfg.head_dim) {
  check(plan.n_layers() == cfg.n_layers && plan.n_kv_heads() == cfg.n_kv_heads,
        "KV cache: attention plan is {} layers x {} KV heads, the model has {} x {}", plan.n_layers(),
        plan.n_kv_heads(), cfg.n_layers, cfg.n_kv_heads);
  check(max_tokens > 0, "KV cache: capacity must be positive, got {}", max_tokens);
  const auto n = static_cast<size_t>(max_tokens * stride_pos_);
  check_memory_for(uint64_t(2) * cfg.n_layers * n * kv_type_bytes(type_),
                   fmt::format("a KV cache of {} tokens ({})", max_tokens, kv_type_name(type_)));
  if (type_ == KvType::F16) {
    k16_.assign(cfg.n_layers, std::vector<uint16_t>(n));
    v16_.assign(cfg.n_layers, std::vector<uint16_t>(n));
  } else {
    k_.assign(cfg.n_layers, std::vector<float>(n));
    v_.assign(cfg.n_layers, std::vector<float>(n));
  }
}

void KVCache::attend(int layer, const float* q, const float* k, const float* v, float* out, int n,
                     int64_t pos0) {
  check(pos0 == length_, "KV cache: new tokens start at position {}, cache holds {}", pos0, length_);
  check(pos0 + n <= capacity_, "KV cache: {} tokens exceed its capacity of {}", pos0 + n, capacity_);
  const int64_t at = pos0 * stride_pos_, count = n * stride_pos_;
  if (type_ == KvType::F16) {
    floats_to_halves(k, &k16_[layer][at], count);
    floats_to_halves(v, &v16_[layer][at], count);
    AttentionArgs a = dense_attention_args(q, nullptr, nullptr, out, n, pos0, cfg_.n_heads, cfg_.n_kv_heads,
                                           cfg_.head_dim, plan_.windows(layer), plan_.sinks_of(layer));
    a.k16 = k16_[layer].data();
    a.v16 = v16_[layer].data();
    return attention(a);
  }
  std::memcpy(&k_[layer][at], k, sizeof(float) * count);
  std::memcpy(&v_[layer][at], v, sizeof(float) * count);
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
  for (const auto* kv : {&k_, &v_})
    for (auto& x : *kv) b += static_cast<int64_t>(x.capacity() * sizeof(float));
  for (const auto* kv : {&k16_, &v16_})
    for (auto& x : *kv) b += static_cast<int64_t>(x.capacity() * sizeof(uint16_t));
  return b;
}

}  // namespace bosch
