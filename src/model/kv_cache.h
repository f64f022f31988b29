// Plain KV cache for generation: per layer, K and V for every position and KV head, float32,
// layout [pos][kv_head][head_dim]. (The memory-saving per-head hybrid cache is runtime/.)
#pragma once
#include <cstdint>
#include <vector>

#include "model/config.h"

namespace bosch {

class KVCache {
 public:
  KVCache(const ModelConfig& cfg, int64_t max_tokens);
  int64_t length() const { return length_; }       // positions already stored
  int64_t capacity() const { return capacity_; }
  void set_length(int64_t n);                       // after a forward stores new positions
  void clear() { length_ = 0; }
  float* k(int layer) { return k_[layer].data(); }
  float* v(int layer) { return v_[layer].data(); }
  int64_t stride_pos() const { return stride_pos_; }  // = n_kv_heads * head_dim
  int64_t bytes() const;                              // resident bytes of K and V

 private:
  std::vector<std::vector<float>> k_, v_;
  int64_t length_ = 0, capacity_ = 0, stride_pos_ = 0;
};

}  // namespace bosch
