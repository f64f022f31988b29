// Where a layer's keys and values live between forward calls, and how attention reads them.
// Model::forward_layers computes q, k, v (after RoPE) and hands them to a KVStore, which stores
// the new K/V and computes the attention output. The plain cache here keeps every position;
// hybrid_kv_cache.h provides the hybrid cache (ring buffers for SWA heads) behind the same interface.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/attention_plan.h"
#include "model/config.h"

namespace bosch {

// What a cache keeps K and V in: float32, or fp16 (half the bytes, llama.cpp's default: each
// stored value rounded to the nearest half, relative error <= 2^-11; attention then widens them
// back and computes in float32). The search and evaluation keep no cache: this is for decoding.
enum class KvType { F32, F16 };
KvType parse_kv_type(const std::string& name);  // "f32" or "f16", else an Error naming both
const char* kv_type_name(KvType t);
inline int64_t kv_type_bytes(KvType t) { return t == KvType::F16 ? 2 : 4; }

// A store owns its attention plan from construction: the plan fixes what it keeps (the hybrid
// cache's ring sizes) and what each attend() sees, so no call can run it with another plan.
class KVStore {
 public:
  virtual ~KVStore() = default;
  virtual const AttentionPlan& plan() const = 0;
  // Positions already committed (the next token's position).
  virtual int64_t length() const = 0;
  // For `layer`: store k, v of n new tokens (rows [n, n_kv_heads*head_dim], positions
  // pos0 .. pos0+n-1, pos0 == length()), then write attention of queries q
  // ([n, n_heads*head_dim]) over the positions plan() lets them see into out
  // ([n, n_heads*head_dim]).
  virtual void attend(int layer, const float* q, const float* k, const float* v, float* out,
                      int n, int64_t pos0) = 0;
  // Called once all layers have seen the n new tokens.
  virtual void commit(int64_t new_length) = 0;
  virtual void clear() = 0;
  virtual int64_t bytes() const = 0;  // resident bytes of K and V
};

// Plain cache: per layer K and V for every position, layout [pos][kv_head][head_dim], float32
// or fp16. SWA heads of the plan are masked, not evicted (the hybrid cache evicts).
class KVCache : public KVStore {
 public:
  KVCache(const ModelConfig& cfg, const AttentionPlan& plan, int64_t max_tokens, KvType type = KvType::F32);
  const AttentionPlan& plan() const override { return plan_; }
  int64_t length() const override { return length_; }
  int64_t capacity() const { return capacity_; }
  void attend(int layer, const float* q, const float* k, const float* v, float* out, int n,
              int64_t pos0) override;
  void commit(int64_t new_length) override;
  void clear() override { length_ = 0; }
  int64_t bytes() const override;

 private:
  ModelConfig cfg_;
  AttentionPlan plan_;
  KvType type_;
  std::vector<std::vector<float>> k_, v_;        // float32: one per layer (else empty)
  std::vector<std::vector<uint16_t>> k16_, v16_;  // fp16
  int64_t length_ = 0, capacity_ = 0, stride_pos_ = 0;
};

}  // namespace bosch
