// Internal to the attention kernel (attention.cpp and its per-instruction-set work items in
// attention_kernels.h): how a call is cut into work items, and which key blocks an item visits.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/isa.h"
#include "kernels/visibility.h"

namespace bosch::kernels {

constexpr int kAttnKeyBlock = 64;  // keys per block
constexpr int kAttnMaxRows = 64;   // query rows per work item: 4 vectors of 16 lanes
constexpr int kAttnFewRows = 8;    // up to this many rows, the row-major (decode) path runs

// Built and validated by make_layout (attention.cpp); a plain struct, shared by every set.
struct AttentionLayout {
  int group = 1;           // query heads per KV head
  int heads_per_item = 1;  // query heads of the group in one item (all of them unless > 64)
  int head_chunks = 1;     // items per (token block, KV head)
  int tok_per_block = 1;   // query tokens per item
  int n_tok_blocks = 0;
  int row_vectors = 1;     // ceil(rows / 16): 1..4
  int64_t n_items = 0;
};

inline namespace BOSCH_ISA {

inline int window_of(const AttentionArgs& a, int g) { return a.window ? a.window[g] : 0; }
inline int sinks_of(const AttentionArgs& a, int g) {
  return (a.window && a.window[g] > 0 && a.sinks) ? a.sinks[g] : 0;
}

struct AttnItem {
  int g = 0, head0 = 0, t0 = 0, nt = 0;  // KV head, first query head in group, tokens
  int64_t i0 = 0, i1 = 0;                // absolute positions of the first and last token
};

// Items are numbered most expensive (latest tokens) first, for load balance.
inline AttnItem item_at(const AttentionArgs& a, const AttentionLayout& L, int64_t it) {
  const int64_t per_block = static_cast<int64_t>(a.n_kv_heads) * L.head_chunks;
  const int tb = L.n_tok_blocks - 1 - static_cast<int>(it / per_block);
  const int rem = static_cast<int>(it % per_block);
  AttnItem x;
  x.g = rem / L.head_chunks;
  x.head0 = (rem % L.head_chunks) * L.heads_per_item;
  x.t0 = tb * L.tok_per_block;
  x.nt = std::min(L.tok_per_block, a.n_q - x.t0);
  x.i0 = a.q_pos0 + x.t0;
  x.i1 = x.i0 + x.nt - 1;
  return x;
}

// Calls fn(kb) for each key block some query at positions [i0, i1] can see under (w, s).
template <class Fn>
void for_each_key_block(int64_t i0, int64_t i1, int w, int s, Fn&& fn) {
  const int64_t last = i1 / kAttnKeyBlock;
  const int64_t first_window = w > 0 ? std::max<int64_t>(0, i0 - w + 1) / kAttnKeyBlock : 0;
  const int64_t sink_end = w > 0 ? std::min<int64_t>(last + 1, (s + kAttnKeyBlock - 1) / kAttnKeyBlock) : 0;
  for (int64_t kb = 0; kb < std::min(sink_end, first_window); ++kb) fn(kb);
  for (int64_t kb = first_window; kb <= last; ++kb) fn(kb);
}

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
