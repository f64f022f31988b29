// Blocked causal attention with online softmax (FlashAttention-style, on the CPU).
//
// A work item is (block of query tokens, KV head): its rows are (token, query head of the GQA
// group) pairs, at most 64, so one pass over a K/V block serves all query heads of the group.
// Rows are the vector lanes: the item keeps Q^T [head_dim][rows], scores S^T [keys][rows] and
// the output O^T [head_dim][rows], so K and V are read in place (no per-block transpose) and the
// softmax bookkeeping (max, rescale, sum) is elementwise over rows. Key blocks of 64 positions
// that no row can see are skipped: for an SWA head only the sink blocks and the blocks inside
// the window band remain, so it costs O(n * (W + S)). Each item is computed by exactly one
// thread with fixed arithmetic, so the output does not depend on the thread count.
// Items of at most 8 rows (decode) with head_dim 16/32/64/128 take a row-major path instead
// (dot products along head_dim), which does not waste 16-row lanes on 1-2 real rows. With an
// fp16 cache the lanes path widens each visited key block into the item's scratch (read by up
// to 64 rows), the row-major path widens each vector as it loads it; the arithmetic after that
// is the float32 kernel's.
#include "kernels/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "formats/dtype.h"
#include "kernels/attention_layout.h"
#include "kernels/dispatch.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch {

using kernels::AttentionLayout;
using kernels::AttnItem;
using kernels::for_each_key_block;
using kernels::item_at;
using kernels::kAttnKeyBlock;
using kernels::kAttnMaxRows;
using kernels::sinks_of;
using kernels::window_of;

namespace {

AttentionLayout make_layout(const AttentionArgs& a) {
  check(a.n_q >= 0, "attention: n_q must be >= 0, got {}", a.n_q);
  check(a.q_pos0 >= 0, "attention: q_pos0 must be >= 0, got {}", a.q_pos0);
  check(a.n_heads > 0 && a.n_kv_heads > 0 && a.n_heads % a.n_kv_heads == 0,
        "attention: n_heads ({}) must be a positive multiple of n_kv_heads ({})", a.n_heads,
        a.n_kv_heads);
  check(a.head_dim > 0, "attention: head_dim must be > 0, got {}", a.head_dim);
  if (a.n_q > 0)
    check(a.q && a.out && ((a.k && a.v && !a.k16 && !a.v16) || (a.k16 && a.v16 && !a.k && !a.v)),
          "attention: q, out and either k, v (float32) or k16, v16 (fp16) must be set");
  for (int g = 0; g < a.n_kv_heads; ++g) {
    if (a.window)
      check(a.window[g] >= 0, "attention: window of KV head {} is {}, expected >= 0", g, a.window[g]);
    if (a.sinks)
      check(a.sinks[g] >= 0, "attention: sinks of KV head {} is {}, expected >= 0", g, a.sinks[g]);
  }
  AttentionLayout l;
  l.group = a.n_heads / a.n_kv_heads;
  l.heads_per_item = std::min(l.group, kAttnMaxRows);
  l.head_chunks = (l.group + l.heads_per_item - 1) / l.heads_per_item;
  l.tok_per_block = kAttnMaxRows / l.heads_per_item;
  l.n_tok_blocks = (a.n_q + l.tok_per_block - 1) / l.tok_per_block;
  const int rows = std::min(a.n_q, l.tok_per_block) * l.heads_per_item;
  l.row_vectors = std::max(1, (rows + 15) / 16);
  l.n_items = static_cast<int64_t>(l.n_tok_blocks) * a.n_kv_heads * l.head_chunks;
  return l;
}

}  // namespace

int attention_key_block() { return kAttnKeyBlock; }

void attention(const AttentionArgs& a) {
  const AttentionLayout L = make_layout(a);
  if (L.n_items == 0) return;
  kernels::active_kernels().attention(a, L);  // attention_kernels.h, per instruction set
}

int64_t attention_visited_blocks(const AttentionArgs& a) {
  const AttentionLayout L = make_layout(a);
  int64_t total = 0;
  for (int64_t it = 0; it < L.n_items; ++it) {
    const AttnItem x = item_at(a, L, it);
    for_each_key_block(x.i0, x.i1, window_of(a, x.g), sinks_of(a, x.g), [&](int64_t) { ++total; });
  }
  return total;
}

double attention_flops(const AttentionArgs& a) {
  const AttentionLayout L = make_layout(a);
  double pairs = 0;
  for (int g = 0; g < a.n_kv_heads; ++g) {
    const int64_t w = window_of(a, g), s = sinks_of(a, g);
    for (int t = 0; t < a.n_q; ++t) {
      const int64_t p = a.q_pos0 + t;
      if (w == 0) {
        pairs += static_cast<double>(p + 1);
      } else {
        const int64_t band = std::min(p + 1, w);
        pairs += static_cast<double>(band + std::max<int64_t>(0, std::min(s, p + 1 - w)));
      }
    }
  }
  return pairs * L.group * 4.0 * a.head_dim;  // QK^T and PV: 2 flops per multiply-add each
}

void attention_reference(const AttentionArgs& a) {
  const AttentionLayout L = make_layout(a);
  const int hd = a.head_dim;
  std::vector<double> sc, acc(hd);
  auto kv = [](const float* f32, const uint16_t* f16, int64_t at) -> double { return f16 ? f16_to_f32(f16[at]) : f32[at]; };
  for (int t = 0; t < a.n_q; ++t) {
    const int64_t i = a.q_pos0 + t;
    for (int h = 0; h < a.n_heads; ++h) {
      const int g = h / L.group;
      const int w = window_of(a, g), s = sinks_of(a, g);
      const float* q = a.q + t * a.q_stride_tok + h * a.q_stride_head;
      sc.assign(i + 1, 0.0);
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j <= i; ++j) {
        if (!kernels::sees_key(i, j, w, s)) continue;
        const int64_t at = j * a.kv_stride_pos + g * a.kv_stride_head;
        double d = 0;
        for (int x = 0; x < hd; ++x) d += static_cast<double>(q[x]) * kv(a.k, a.k16, at + x);
        sc[j] = d * a.scale;
        mx = std::max(mx, sc[j]);
      }
      double den = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j <= i; ++j) {
        if (!kernels::sees_key(i, j, w, s)) continue;
        const double e = std::exp(sc[j] - mx);
        den += e;
        const int64_t at = j * a.kv_stride_pos + g * a.kv_stride_head;
        for (int x = 0; x < hd; ++x) acc[x] += e * kv(a.v, a.v16, at + x);
      }
      float* o = a.out + t * a.o_stride_tok + h * a.o_stride_head;
      for (int x = 0; x < hd; ++x) o[x] = static_cast<float>(acc[x] / den);
    }
  }
}

}  // namespace bosch
