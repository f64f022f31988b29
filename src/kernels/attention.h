// Causal multi-head attention with GQA and a per-KV-head window (see model/attention_plan.h
// for the visibility rule). `attention` is the fast blocked kernel (online softmax over key
// blocks, skipping blocks a head cannot see, so an SWA head costs O(n*W)); `attention_reference`
// is the naive O(n^2) definition kept for tests.
#pragma once
#include <cmath>
#include <cstdint>

namespace bosch {

struct AttentionArgs {
  // Query t (0 <= t < n_q) has absolute position q_pos0 + t; head h's vector starts at
  // q + t * q_stride_tok + h * q_stride_head.
  const float* q = nullptr;
  int64_t q_stride_tok = 0, q_stride_head = 0;
  // The key/value of absolute position p for KV head g starts at
  // k + p * kv_stride_pos + g * kv_stride_head (same strides for v). Positions
  // 0 .. q_pos0 + n_q - 1 must be present.
  const float* k = nullptr;
  const float* v = nullptr;
  // Or K/V stored as fp16 (an fp16 KV cache), same layout and strides: exactly one of the pairs
  // (k, v) and (k16, v16) is set. The fast kernel widens the values as it reads them.
  const uint16_t* k16 = nullptr;
  const uint16_t* v16 = nullptr;
  int64_t kv_stride_pos = 0, kv_stride_head = 0;
  float* out = nullptr;  // same layout rule as q, with o_stride_tok / o_stride_head
  int64_t o_stride_tok = 0, o_stride_head = 0;

  int n_q = 0;
  int64_t q_pos0 = 0;
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;              // usually 1/sqrt(head_dim)
  const int32_t* window = nullptr; // per KV head: 0 = full, else W
  const int32_t* sinks = nullptr;  // per KV head: S (ignored when window is 0)
};

// Arguments for the dense layout used by the model and the plain KV cache: q and out are
// [n_q][n_heads][head_dim], k and v are [position][n_kv_heads][head_dim]; scale 1/sqrt(head_dim).
inline AttentionArgs dense_attention_args(const float* q, const float* k, const float* v, float* out,
                                          int n_q, int64_t q_pos0, int n_heads, int n_kv_heads,
                                          int head_dim, const int32_t* window, const int32_t* sinks) {
  AttentionArgs a;
  a.q = q;
  a.q_stride_tok = static_cast<int64_t>(n_heads) * head_dim;
  a.q_stride_head = head_dim;
  a.k = k;
  a.v = v;
  a.kv_stride_pos = static_cast<int64_t>(n_kv_heads) * head_dim;
  a.kv_stride_head = head_dim;
  a.out = out;
  a.o_stride_tok = a.q_stride_tok;
  a.o_stride_head = head_dim;
  a.n_q = n_q;
  a.q_pos0 = q_pos0;
  a.n_heads = n_heads;
  a.n_kv_heads = n_kv_heads;
  a.head_dim = head_dim;
  a.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  a.window = window;
  a.sinks = sinks;
  return a;
}

// Throws bosch::Error on an inconsistent shape (heads not a multiple of KV heads, negative
// window/sinks, missing pointers). `window` == nullptr means every head is full.
void attention(const AttentionArgs& a);
void attention_reference(const AttentionArgs& a);

// Key blocks (of attention_key_block() keys) the fast kernel visits for these arguments,
// summed over its work items; reads no tensor data. Shows that SWA heads skip blocks.
int64_t attention_visited_blocks(const AttentionArgs& a);
int attention_key_block();
// Multiply-adds of the visible (query, key) pairs times 2 * head_dim for QK^T and PV: the
// useful FLOPs of a call, for reporting achieved GFLOP/s.
double attention_flops(const AttentionArgs& a);

}  // namespace bosch
