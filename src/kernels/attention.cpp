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
// (dot products along head_dim), which does not waste 16-row lanes on 1-2 real rows.
#include "kernels/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/fast_exp.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch {

using kernels::fast_exp;
using kernels::vf16;
using kernels::vf16_load;
using kernels::vf16_splat;
using kernels::vf16_store;

namespace {

constexpr int kKeyBlock = 64;  // keys per block
constexpr int kMaxRows = 64;   // query rows per work item: 4 vectors of 16 lanes
constexpr int kFewRows = 8;    // up to this many rows, the row-major (decode) path runs
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline bool visible(int64_t i, int64_t j, int w, int s) {
  return j <= i && (w == 0 || i - j < w || j < s);
}

struct Layout {
  int group = 1;           // query heads per KV head
  int heads_per_item = 1;  // query heads of the group in one item (all of them unless > 64)
  int head_chunks = 1;     // items per (token block, KV head)
  int tok_per_block = 1;   // query tokens per item
  int n_tok_blocks = 0;
  int row_vectors = 1;     // ceil(rows / 16): 1..4
  int64_t n_items = 0;
};

Layout make_layout(const AttentionArgs& a) {
  check(a.n_q >= 0, "attention: n_q must be >= 0, got {}", a.n_q);
  check(a.q_pos0 >= 0, "attention: q_pos0 must be >= 0, got {}", a.q_pos0);
  check(a.n_heads > 0 && a.n_kv_heads > 0 && a.n_heads % a.n_kv_heads == 0,
        "attention: n_heads ({}) must be a positive multiple of n_kv_heads ({})", a.n_heads,
        a.n_kv_heads);
  check(a.head_dim > 0, "attention: head_dim must be > 0, got {}", a.head_dim);
  if (a.n_q > 0) check(a.q && a.k && a.v && a.out, "attention: q, k, v and out must be set");
  for (int g = 0; g < a.n_kv_heads; ++g) {
    if (a.window)
      check(a.window[g] >= 0, "attention: window of KV head {} is {}, expected >= 0", g, a.window[g]);
    if (a.sinks)
      check(a.sinks[g] >= 0, "attention: sinks of KV head {} is {}, expected >= 0", g, a.sinks[g]);
  }
  Layout l;
  l.group = a.n_heads / a.n_kv_heads;
  l.heads_per_item = std::min(l.group, kMaxRows);
  l.head_chunks = (l.group + l.heads_per_item - 1) / l.heads_per_item;
  l.tok_per_block = kMaxRows / l.heads_per_item;
  l.n_tok_blocks = (a.n_q + l.tok_per_block - 1) / l.tok_per_block;
  const int rows = std::min(a.n_q, l.tok_per_block) * l.heads_per_item;
  l.row_vectors = std::max(1, (rows + 15) / 16);
  l.n_items = static_cast<int64_t>(l.n_tok_blocks) * a.n_kv_heads * l.head_chunks;
  return l;
}

int window_of(const AttentionArgs& a, int g) { return a.window ? a.window[g] : 0; }
int sinks_of(const AttentionArgs& a, int g) {
  return (a.window && a.window[g] > 0 && a.sinks) ? a.sinks[g] : 0;
}

struct Item {
  int g = 0, head0 = 0, t0 = 0, nt = 0;  // KV head, first query head in group, tokens
  int64_t i0 = 0, i1 = 0;                // absolute positions of the first and last token
};

// Items are numbered most expensive (latest tokens) first, for load balance.
Item item_at(const AttentionArgs& a, const Layout& L, int64_t it) {
  const int64_t per_block = static_cast<int64_t>(a.n_kv_heads) * L.head_chunks;
  const int tb = L.n_tok_blocks - 1 - static_cast<int>(it / per_block);
  const int rem = static_cast<int>(it % per_block);
  Item x;
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
  const int64_t last = i1 / kKeyBlock;
  const int64_t first_window = w > 0 ? std::max<int64_t>(0, i0 - w + 1) / kKeyBlock : 0;
  const int64_t sink_end = w > 0 ? std::min<int64_t>(last + 1, (s + kKeyBlock - 1) / kKeyBlock) : 0;
  for (int64_t kb = 0; kb < std::min(sink_end, first_window); ++kb) fn(kb);
  for (int64_t kb = first_window; kb <= last; ++kb) fn(kb);
}

// st[j][:] = sum_d k[j][d] * qt[d][:] for j < nk. qt is [hd][RV*16]; key j starts at k + j*ks.
// Register block: KJ keys x RV row vectors of accumulators.
template <int RV>
void block_scores(const float* qt, const float* k, int64_t ks, int nk, int hd, float* st) {
  constexpr int RL = RV * 16, KJ = 16 / RV;
  int j = 0;
  for (; j + KJ <= nk; j += KJ) {
    vf16 acc[KJ][RV] = {};
    for (int d = 0; d < hd; ++d) {
      vf16 qv[RV];
      for (int c = 0; c < RV; ++c) qv[c] = vf16_load(qt + d * RL + c * 16);
      for (int kj = 0; kj < KJ; ++kj) {
        const float kd = k[(j + kj) * ks + d];
        for (int c = 0; c < RV; ++c) acc[kj][c] += kd * qv[c];
      }
    }
    for (int kj = 0; kj < KJ; ++kj)
      for (int c = 0; c < RV; ++c) vf16_store(st + (j + kj) * RL + c * 16, acc[kj][c]);
  }
  for (; j < nk; ++j) {
    vf16 acc[RV] = {};
    for (int d = 0; d < hd; ++d) {
      const float kd = k[j * ks + d];
      for (int c = 0; c < RV; ++c) acc[c] += kd * vf16_load(qt + d * RL + c * 16);
    }
    for (int c = 0; c < RV; ++c) vf16_store(st + j * RL + c * 16, acc[c]);
  }
}

// ot[d][:] += sum_{j < nk} v[j][d] * pt[j][:]. Register block: DG dims x RV row vectors.
template <int RV>
void block_pv(const float* pt, const float* v, int64_t vs, int nk, int hd, float* ot) {
  constexpr int RL = RV * 16, DG = 16 / RV;
  int d = 0;
  for (; d + DG <= hd; d += DG) {
    vf16 acc[DG][RV];
    for (int e = 0; e < DG; ++e)
      for (int c = 0; c < RV; ++c) acc[e][c] = vf16_load(ot + (d + e) * RL + c * 16);
    for (int j = 0; j < nk; ++j) {
      vf16 pv[RV];
      for (int c = 0; c < RV; ++c) pv[c] = vf16_load(pt + j * RL + c * 16);
      for (int e = 0; e < DG; ++e) {
        const float vd = v[j * vs + d + e];
        for (int c = 0; c < RV; ++c) acc[e][c] += vd * pv[c];
      }
    }
    for (int e = 0; e < DG; ++e)
      for (int c = 0; c < RV; ++c) vf16_store(ot + (d + e) * RL + c * 16, acc[e][c]);
  }
  for (; d < hd; ++d) {
    vf16 acc[RV];
    for (int c = 0; c < RV; ++c) acc[c] = vf16_load(ot + d * RL + c * 16);
    for (int j = 0; j < nk; ++j) {
      const float vd = v[j * vs + d];
      for (int c = 0; c < RV; ++c) acc[c] += vd * vf16_load(pt + j * RL + c * 16);
    }
    for (int c = 0; c < RV; ++c) vf16_store(ot + d * RL + c * 16, acc[c]);
  }
}

// Per-thread buffers, 64-byte aligned through vf16 storage, sized for 4 row vectors.
struct Scratch {
  std::vector<vf16> qt, st, ot;
  explicit Scratch(int hd) : qt(static_cast<size_t>(hd) * 4), st(kKeyBlock * 4), ot(qt.size()) {}
  static float* f(std::vector<vf16>& v) { return reinterpret_cast<float*>(v.data()); }
};

template <int RV>
void run_item(const AttentionArgs& a, const Layout& L, const Item& x, Scratch& sc) {
  constexpr int RL = RV * 16;
  const int hd = a.head_dim, hpi = L.heads_per_item;
  const int rows = x.nt * hpi;
  const int w = window_of(a, x.g), s = sinks_of(a, x.g);
  float* qt = Scratch::f(sc.qt);
  float* st = Scratch::f(sc.st);
  float* ot = Scratch::f(sc.ot);
  // Row r = token t0 + r / hpi, query head g * group + head0 + r % hpi; scale folded into q.
  auto head_of = [&](int r) { return x.head0 + r % hpi; };
  std::fill(qt, qt + hd * RL, 0.0f);
  for (int r = 0; r < rows; ++r) {
    if (head_of(r) >= L.group) continue;  // last chunk of a group wider than 64 heads
    const float* src = a.q + (x.t0 + r / hpi) * a.q_stride_tok +
                       (x.g * L.group + head_of(r)) * a.q_stride_head;
    for (int d = 0; d < hd; ++d) qt[d * RL + r] = src[d] * a.scale;
  }
  std::fill(ot, ot + hd * RL, 0.0f);
  vf16 m[RV], l[RV];
  for (int c = 0; c < RV; ++c) {
    m[c] = vf16_splat(kNegInf);
    l[c] = vf16{};
  }
  const float* kbase = a.k + x.g * a.kv_stride_head;
  const float* vbase = a.v + x.g * a.kv_stride_head;
  const int64_t ps = a.kv_stride_pos;

  for_each_key_block(x.i0, x.i1, w, s, [&](int64_t kb) {
    const int64_t j0 = kb * kKeyBlock;
    const int nk = static_cast<int>(std::min<int64_t>(kKeyBlock, x.i1 - j0 + 1));
    const int64_t j1 = j0 + nk - 1;
    block_scores<RV>(qt, kbase + j0 * ps, ps, nk, hd, st);
    const bool all_visible = j1 <= x.i0 && (w == 0 || x.i1 - j0 < w || j1 < s);
    if (!all_visible) {
      for (int r = 0; r < rows; ++r) {
        const int64_t pos = x.i0 + r / hpi;
        for (int j = 0; j < nk; ++j)
          if (!visible(pos, j0 + j, w, s)) st[j * RL + r] = kNegInf;
      }
    }
    // Online softmax, elementwise over rows. A row that has seen nothing yet keeps m = -inf;
    // shifting it by 0 instead keeps exp() at 0 rather than NaN.
    vf16 shift[RV], corr[RV], sum[RV];
    for (int c = 0; c < RV; ++c) {
      vf16 bmax = vf16_splat(kNegInf);
      for (int j = 0; j < nk; ++j) {
        const vf16 v = vf16_load(st + j * RL + c * 16);
        bmax = v > bmax ? v : bmax;
      }
      const vf16 m_new = bmax > m[c] ? bmax : m[c];
      shift[c] = m_new == vf16_splat(kNegInf) ? vf16{} : m_new;
      corr[c] = fast_exp(m[c] - shift[c]);
      m[c] = m_new;
      sum[c] = vf16{};
    }
    for (int j = 0; j < nk; ++j)
      for (int c = 0; c < RV; ++c) {
        const vf16 e = fast_exp(vf16_load(st + j * RL + c * 16) - shift[c]);
        vf16_store(st + j * RL + c * 16, e);
        sum[c] += e;
      }
    for (int c = 0; c < RV; ++c) l[c] = l[c] * corr[c] + sum[c];
    for (int d = 0; d < hd; ++d)
      for (int c = 0; c < RV; ++c)
        vf16_store(ot + d * RL + c * 16, vf16_load(ot + d * RL + c * 16) * corr[c]);
    block_pv<RV>(st, vbase + j0 * ps, ps, nk, hd, ot);
  });

  float inv[RL];
  for (int c = 0; c < RV; ++c) vf16_store(inv + c * 16, 1.0f / l[c]);  // l > 0: a query sees itself
  for (int r = 0; r < rows; ++r) {
    if (head_of(r) >= L.group) continue;
    float* dst = a.out + (x.t0 + r / hpi) * a.o_stride_tok +
                 (x.g * L.group + head_of(r)) * a.o_stride_head;
    for (int d = 0; d < hd; ++d) dst[d] = ot[d * RL + r] * inv[r];
  }
}

// Few rows (decode, tiny chunks): lanes-as-rows would waste most of each vector, so rows stay
// row-major and dot products run along head_dim (NV vectors of 16), one horizontal sum per
// (row, key). Needs head_dim == NV * 16.
inline float hsum(vf16 v) {
  typedef float vf8 __attribute__((vector_size(32)));
  typedef float vf4 __attribute__((vector_size(16)));
  const vf8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const vf4 b = __builtin_shufflevector(a, a, 0, 1, 2, 3) + __builtin_shufflevector(a, a, 4, 5, 6, 7);
  return (b[0] + b[2]) + (b[1] + b[3]);
}

template <int NV>
void run_item_few_rows(const AttentionArgs& a, const Layout& L, const Item& x, Scratch& sc) {
  constexpr int HD = NV * 16;
  const int hpi = L.heads_per_item;
  const int rows = x.nt * hpi;
  const int w = window_of(a, x.g), s = sinks_of(a, x.g);
  float* qb = Scratch::f(sc.qt);  // [rows][HD]
  float* ob = Scratch::f(sc.ot);  // [rows][HD]
  float* sb = Scratch::f(sc.st);  // [rows][64]
  float m[kFewRows], l[kFewRows];
  auto head_of = [&](int r) { return x.head0 + r % hpi; };
  for (int r = 0; r < rows; ++r) {
    m[r] = kNegInf;
    l[r] = 0.0f;
    std::fill(ob + r * HD, ob + (r + 1) * HD, 0.0f);
    std::fill(qb + r * HD, qb + (r + 1) * HD, 0.0f);
    if (head_of(r) >= L.group) continue;
    const float* src = a.q + (x.t0 + r / hpi) * a.q_stride_tok +
                       (x.g * L.group + head_of(r)) * a.q_stride_head;
    for (int d = 0; d < HD; ++d) qb[r * HD + d] = src[d] * a.scale;
  }
  const float* kbase = a.k + x.g * a.kv_stride_head;
  const float* vbase = a.v + x.g * a.kv_stride_head;
  const int64_t ps = a.kv_stride_pos;

  for_each_key_block(x.i0, x.i1, w, s, [&](int64_t kb) {
    const int64_t j0 = kb * kKeyBlock;
    const int nk = static_cast<int>(std::min<int64_t>(kKeyBlock, x.i1 - j0 + 1));
    const int64_t j1 = j0 + nk - 1;
    for (int j = 0; j < nk; ++j) {
      vf16 kv[NV];
      for (int c = 0; c < NV; ++c) kv[c] = vf16_load(kbase + (j0 + j) * ps + c * 16);
      for (int r = 0; r < rows; ++r) {
        vf16 acc = kv[0] * vf16_load(qb + r * HD);
        for (int c = 1; c < NV; ++c) acc += kv[c] * vf16_load(qb + r * HD + c * 16);
        sb[r * kKeyBlock + j] = hsum(acc);
      }
    }
    const bool all_visible = j1 <= x.i0 && (w == 0 || x.i1 - j0 < w || j1 < s);
    for (int r = 0; r < rows; ++r) {
      float* sr = sb + r * kKeyBlock;
      const int64_t pos = x.i0 + r / hpi;
      for (int j = nk; j < kKeyBlock; ++j) sr[j] = kNegInf;
      if (!all_visible)
        for (int j = 0; j < nk; ++j)
          if (!visible(pos, j0 + j, w, s)) sr[j] = kNegInf;
      vf16 mx = vf16_load(sr);
      for (int c = 16; c < kKeyBlock; c += 16) {
        const vf16 v = vf16_load(sr + c);
        mx = v > mx ? v : mx;
      }
      float bmax = mx[0];
      for (int lane = 1; lane < 16; ++lane) bmax = std::max(bmax, mx[lane]);
      const float m_new = std::max(m[r], bmax);
      const float shift = m_new == kNegInf ? 0.0f : m_new;  // see run_item
      const float corr = fast_exp(m[r] - shift);
      vf16 sum{};
      for (int c = 0; c < kKeyBlock; c += 16) {
        const vf16 e = fast_exp(vf16_load(sr + c) - shift);
        vf16_store(sr + c, e);
        sum += e;
      }
      l[r] = l[r] * corr + hsum(sum);
      m[r] = m_new;
      for (int c = 0; c < NV; ++c) vf16_store(ob + r * HD + c * 16, vf16_load(ob + r * HD + c * 16) * corr);
    }
    for (int j = 0; j < nk; ++j) {
      vf16 vv[NV];
      for (int c = 0; c < NV; ++c) vv[c] = vf16_load(vbase + (j0 + j) * ps + c * 16);
      for (int r = 0; r < rows; ++r) {
        const float p = sb[r * kKeyBlock + j];
        for (int c = 0; c < NV; ++c) vf16_store(ob + r * HD + c * 16, vf16_load(ob + r * HD + c * 16) + p * vv[c]);
      }
    }
  });

  for (int r = 0; r < rows; ++r) {
    if (head_of(r) >= L.group) continue;
    float* dst = a.out + (x.t0 + r / hpi) * a.o_stride_tok + (x.g * L.group + head_of(r)) * a.o_stride_head;
    const float inv = 1.0f / l[r];
    for (int d = 0; d < HD; ++d) dst[d] = ob[r * HD + d] * inv;
  }
}

void run_item_any(const AttentionArgs& a, const Layout& L, int64_t it, Scratch& sc) {
  const Item x = item_at(a, L, it);
  if (x.nt * L.heads_per_item <= kFewRows) {
    switch (a.head_dim) {
      case 16: return run_item_few_rows<1>(a, L, x, sc);
      case 32: return run_item_few_rows<2>(a, L, x, sc);
      case 64: return run_item_few_rows<4>(a, L, x, sc);
      case 128: return run_item_few_rows<8>(a, L, x, sc);
      default: break;  // other sizes: the lanes path below handles any head_dim
    }
  }
  switch (L.row_vectors) {
    case 1: return run_item<1>(a, L, x, sc);
    case 2: return run_item<2>(a, L, x, sc);
    case 3: return run_item<3>(a, L, x, sc);
    default: return run_item<4>(a, L, x, sc);
  }
}

}  // namespace

int attention_key_block() { return kKeyBlock; }

void attention(const AttentionArgs& a) {
  const Layout L = make_layout(a);
  if (L.n_items == 0) return;
  // Dynamic hand-out of items (most expensive first) for balance; results stay deterministic
  // because each item's arithmetic does not depend on which thread runs it.
  std::atomic<int64_t> next{0};
  const int workers = static_cast<int>(std::min<int64_t>(num_threads(), L.n_items));
  parallel_for(workers, [&](size_t, size_t) {
    Scratch sc(a.head_dim);
    for (int64_t it = next.fetch_add(1); it < L.n_items; it = next.fetch_add(1)) run_item_any(a, L, it, sc);
  });
}

int64_t attention_visited_blocks(const AttentionArgs& a) {
  const Layout L = make_layout(a);
  int64_t total = 0;
  for (int64_t it = 0; it < L.n_items; ++it) {
    const Item x = item_at(a, L, it);
    for_each_key_block(x.i0, x.i1, window_of(a, x.g), sinks_of(a, x.g), [&](int64_t) { ++total; });
  }
  return total;
}

double attention_flops(const AttentionArgs& a) {
  const Layout L = make_layout(a);
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
  const Layout L = make_layout(a);
  const int hd = a.head_dim;
  std::vector<double> sc, acc(hd);
  for (int t = 0; t < a.n_q; ++t) {
    const int64_t i = a.q_pos0 + t;
    for (int h = 0; h < a.n_heads; ++h) {
      const int g = h / L.group;
      const int w = window_of(a, g), s = sinks_of(a, g);
      const float* q = a.q + t * a.q_stride_tok + h * a.q_stride_head;
      sc.assign(i + 1, 0.0);
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j <= i; ++j) {
        if (!visible(i, j, w, s)) continue;
        const float* k = a.k + j * a.kv_stride_pos + g * a.kv_stride_head;
        double d = 0;
        for (int x = 0; x < hd; ++x) d += static_cast<double>(q[x]) * k[x];
        sc[j] = d * a.scale;
        mx = std::max(mx, sc[j]);
      }
      double den = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j <= i; ++j) {
        if (!visible(i, j, w, s)) continue;
        const double e = std::exp(sc[j] - mx);
        den += e;
        const float* v = a.v + j * a.kv_stride_pos + g * a.kv_stride_head;
        for (int x = 0; x < hd; ++x) acc[x] += e * v[x];
      }
      float* o = a.out + t * a.o_stride_tok + h * a.o_stride_head;
      for (int x = 0; x < hd; ++x) o[x] = static_cast<float>(acc[x] / den);
    }
  }
}

}  // namespace bosch
