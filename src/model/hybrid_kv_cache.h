// The hybrid KV cache: per layer, full-attention KV heads keep every position in a growing
// buffer, SWA KV heads keep only S sink positions + a ring of the W most recent positions.
// Memory is what the attention plan needs, per KV head (not per layer as llama.cpp's iSWA
// cache or vLLM's hybrid manager do).
//
// Layout. The KV heads of a layer are split into groups that share a buffer so one attention
// kernel call serves the whole group: the full heads, and one group per distinct (W, S) among
// the SWA heads. A group's K (and V) buffer is [slot][head of the group][head_dim], float32 or fp16 (KvType).
//   full group: slot = absolute position, slots = capacity() tokens;
//   SWA group:  position p lives in slot p when p < S, else in slot S + (p - S) mod W;
//               slots = min(capacity(), W + S).
// So bytes() == hybrid_kv_bytes(cfg, plan, capacity(), type) exactly, where capacity() is the token
// capacity: max_tokens given at construction (or to reserve()), grown to a multiple of 256
// tokens when a forward needs more.
//
// Attention (visibility rule of model/attention_plan.h, query i sees key j iff j <= i and
// (i - j < W or j < S)) runs through the blocked kernel of kernels/attention.h:
//   full group: on the buffer as is;
//   SWA group, one new token: the token is stored first, after which every filled slot (the S
//     sinks and the W most recent positions, the token included) is visible to it, and
//     attention is order-independent, so the kernel runs as full attention over the slots;
//   SWA group, a chunk of n > 1 tokens at pos0: the sinks, the W-1 positions before pos0 and
//     the chunk are copied in position order into a scratch sequence with the gap between the
//     sinks and the window removed; shifting both query and key positions by the gap keeps
//     every (i - j) inside the window, so the kernel with (W, S) on it is exact, for any n
//     (also n > W). The chunk's K/V are written to the ring afterwards.
// Scratch memory for that is transient (workspace_bytes()) and is not KV cache.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/attention.h"
#include "model/attention_plan.h"
#include "model/config.h"
#include "model/counting_allocator.h"
#include "model/kv_cache.h"

namespace bosch {

// Exact resident K+V bytes of the hybrid cache for a capacity of `tokens` positions:
//   sum over layers of  (full heads * T + sum over SWA heads of min(T, W + S)) * head_dim * 2 * B,
// B = 4 bytes per value (float32) or 2 (fp16).
int64_t hybrid_kv_bytes(const ModelConfig& cfg, const AttentionPlan& plan, int64_t tokens, KvType type = KvType::F32);
// Marginal bytes per token once every ring is full (only full heads grow): full heads * hd * 2 * B.
int64_t hybrid_kv_bytes_per_token(const ModelConfig& cfg, const AttentionPlan& plan, KvType type = KvType::F32);

class HybridKVCache : public KVStore {
 public:
  // `plan` fixes which heads are SWA and their (W, S).
  HybridKVCache(const ModelConfig& cfg, const AttentionPlan& plan, int64_t max_tokens = 0,
                KvType type = KvType::F32);
  HybridKVCache(const HybridKVCache&) = delete;
  HybridKVCache& operator=(const HybridKVCache&) = delete;

  const AttentionPlan& plan() const override { return plan_; }
  int64_t length() const override { return length_; }
  void attend(int layer, const float* q, const float* k, const float* v, float* out, int n,
              int64_t pos0) override;
  void commit(int64_t new_length) override;
  void clear() override;
  // Resident K/V bytes as counted by the allocator of the cache buffers.
  int64_t bytes() const override { return allocated_->load(); }

  int64_t capacity() const { return capacity_; }
  // Grows every buffer to hold `tokens` positions (no-op when already that large).
  void reserve(int64_t tokens);
  // Sum of the buffers' capacities in bytes (cross-check of bytes()).
  int64_t buffer_capacity_bytes() const;
  int64_t workspace_bytes() const;  // transient scratch of the calling thread, not KV cache

  // Benchmarks: appends random K/V for positions length() .. tokens-1 in every layer without
  // computing attention (decode speed does not depend on the values), then commits.
  void fill_synthetic(int64_t tokens, uint64_t seed);

 private:
  struct Group {
    std::vector<int> heads;  // KV head indices of the layer, ascending
    int window = 0, sinks = 0;  // window 0: full attention
    int64_t slots = 0;
    CountedBytes k, v;       // [slot][heads.size()][head_dim] values of the cache's KvType
    std::vector<int32_t> kernel_window, kernel_sinks;  // per head of the group, for the kernel
    int64_t slot_of(int64_t pos) const {
      if (window == 0 || pos < sinks) return pos;
      return sinks + (pos - sinks) % window;
    }
    int64_t slots_for(int64_t tokens) const {
      return window == 0 ? tokens : std::min<int64_t>(tokens, int64_t(window) + sinks);
    }
  };
  struct Layer {
    std::vector<Group> groups;
    int64_t filled = 0;  // positions stored for this layer (== length_ between forwards)
  };

  void grow_group(Group& g, int64_t new_slots);
  // n values at element `at` of a group buffer: stored from float32 (rounded to fp16 in an fp16
  // cache), or read back as float32.
  void put(CountedBytes& b, int64_t at, const float* src, int64_t n) const;
  void get(const CountedBytes& b, int64_t at, float* dst, int64_t n) const;
  void point_at(const Group& g, AttentionArgs& a) const;  // a.k, a.v (or k16, v16) = g's buffers
  void store_tokens(Group& g, const float* k, const float* v, int n, int64_t pos0);
  void attend_group(Group& g, const float* q, const float* k, const float* v, float* out, int n,
                    int64_t pos0);

  ModelConfig cfg_;
  AttentionPlan plan_;
  KvType type_;
  std::unique_ptr<std::atomic<int64_t>> allocated_;
  std::vector<Layer> layers_;
  int64_t length_ = 0, capacity_ = 0;
};

}  // namespace bosch
