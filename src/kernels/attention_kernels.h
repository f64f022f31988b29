// The attention kernel's work items (see attention.cpp for the algorithm), compiled once per
// instruction set: included only by isa_avx2.cpp and isa_avx512.cpp (kernels/dispatch.h).
#pragma once
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>

#include "kernels/attention_layout.h"
#include "kernels/fast_exp.h"
#include "formats/dtype.h"
#include "kernels/ops.h"
#include "util/parallel.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace bosch::kernels {
inline namespace BOSCH_ISA {

constexpr float kAttnNegInf = -std::numeric_limits<float>::infinity();

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
// (unique_ptr, not std::vector<vf16>: a std::vector of the same vector type in both instruction
// sets would be one weak symbol, and the linker could give the baseline the AVX-512 copy.)
struct Scratch {
  std::unique_ptr<vf16[]> qt, st, ot;
  std::unique_ptr<vf16[]> kb, vb;  // a key block widened from fp16 (fp16 K/V only): kAttnKeyBlock x hd
  Scratch(int hd, bool f16)
      : qt(new vf16[static_cast<size_t>(hd) * 4]()), st(new vf16[kAttnKeyBlock * 4]()),
        ot(new vf16[static_cast<size_t>(hd) * 4]()) {
    if (f16) {  // uninitialised: every row is written before it is read
      kb.reset(new vf16[static_cast<size_t>(hd) * kAttnKeyBlock / 16]);
      vb.reset(new vf16[static_cast<size_t>(hd) * kAttnKeyBlock / 16]);
    }
  }
  static float* f(std::unique_ptr<vf16[]>& v) { return reinterpret_cast<float*>(v.get()); }
};

// The parts both kernels share: where row r's query and output live (row r = token
// t0 + r / hpi, query head g * group + head0 + r % hpi), and the keys of key block kb.
inline bool row_in_group(const AttentionLayout& L, const AttnItem& x, int r) {
  return x.head0 + r % L.heads_per_item < L.group;  // false: last chunk of a group wider than 64 heads
}
inline const float* query_row(const AttentionArgs& a, const AttentionLayout& L, const AttnItem& x, int r) {
  return a.q + (x.t0 + r / L.heads_per_item) * a.q_stride_tok +
         (x.g * L.group + x.head0 + r % L.heads_per_item) * a.q_stride_head;
}
inline float* out_row(const AttentionArgs& a, const AttentionLayout& L, const AttnItem& x, int r) {
  return a.out + (x.t0 + r / L.heads_per_item) * a.o_stride_tok +
         (x.g * L.group + x.head0 + r % L.heads_per_item) * a.o_stride_head;
}
// Rows j0 .. j0 + nk - 1 of KV head g of a float32 (f32) or fp16 (f16) K or V: in place for
// float32, else widened into buf with row stride head_dim. *stride: the returned rows' stride.
inline const float* kv_rows(const AttentionArgs& a, const float* f32, const uint16_t* f16, int g, int64_t j0, int nk,
                            float* buf, int64_t* stride) {
  const int64_t at = g * a.kv_stride_head + j0 * a.kv_stride_pos;
  if (!f16) {
    *stride = a.kv_stride_pos;
    return f32 + at;
  }
  for (int j = 0; j < nk; ++j) halves_to_floats(f16 + at + j * a.kv_stride_pos, buf + j * a.head_dim, a.head_dim);
  *stride = a.head_dim;
  return buf;
}
// 16 fp16 values as a float32 vector (the decode path reads an fp16 cache in place).
inline vf16 vf16_load_half(const uint16_t* p) {
#if defined(__F16C__)
  typedef float vf8 __attribute__((vector_size(32)));
  const vf8 lo = reinterpret_cast<vf8>(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  const vf8 hi = reinterpret_cast<vf8>(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8))));
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#else
  vf16 v;
  for (int i = 0; i < 16; ++i) v[i] = f16_to_f32(p[i]);
  return v;
#endif
}
struct KeyBlock {
  int64_t j0;        // first key
  int nk;            // keys in the block (the last block of a row range may be short)
  bool all_visible;  // every key visible to every row: no masking needed
};
inline KeyBlock key_block(const AttnItem& x, int64_t kb, int w, int s) {
  const int64_t j0 = kb * kAttnKeyBlock;
  const int nk = static_cast<int>(std::min<int64_t>(kAttnKeyBlock, x.i1 - j0 + 1));
  const int64_t j1 = j0 + nk - 1;
  return {j0, nk, j1 <= x.i0 && (w == 0 || x.i1 - j0 < w || j1 < s)};
}

template <int RV>
void run_item(const AttentionArgs& a, const AttentionLayout& L, const AttnItem& x, Scratch& sc) {
  constexpr int RL = RV * 16;
  const int hd = a.head_dim, hpi = L.heads_per_item;
  const int rows = x.nt * hpi;
  const int w = window_of(a, x.g), s = sinks_of(a, x.g);
  float* qt = Scratch::f(sc.qt);
  float* st = Scratch::f(sc.st);
  float* ot = Scratch::f(sc.ot);
  std::fill(qt, qt + hd * RL, 0.0f);
  for (int r = 0; r < rows; ++r) {  // transposed; the scale folded into q
    if (!row_in_group(L, x, r)) continue;
    const float* src = query_row(a, L, x, r);
    for (int d = 0; d < hd; ++d) qt[d * RL + r] = src[d] * a.scale;
  }
  std::fill(ot, ot + hd * RL, 0.0f);
  vf16 m[RV], l[RV];
  for (int c = 0; c < RV; ++c) {
    m[c] = vf16_splat(kAttnNegInf);
    l[c] = vf16{};
  }

  for_each_key_block(x.i0, x.i1, w, s, [&](int64_t kb) {
    const auto [j0, nk, all_visible] = key_block(x, kb, w, s);
    int64_t ks = 0, vs = 0;  // (set by kv_rows before use: never in the same call's arguments)
    const float* kr = kv_rows(a, a.k, a.k16, x.g, j0, nk, Scratch::f(sc.kb), &ks);
    block_scores<RV>(qt, kr, ks, nk, hd, st);
    if (!all_visible) {
      for (int r = 0; r < rows; ++r) {
        const int64_t pos = x.i0 + r / hpi;
        for (int j = 0; j < nk; ++j)
          if (!sees_key(pos, j0 + j, w, s)) st[j * RL + r] = kAttnNegInf;
      }
    }
    // Online softmax, elementwise over rows. A row that has seen nothing yet keeps m = -inf;
    // shifting it by 0 instead keeps exp() at 0 rather than NaN.
    vf16 shift[RV], corr[RV], sum[RV];
    for (int c = 0; c < RV; ++c) {
      vf16 bmax = vf16_splat(kAttnNegInf);
      for (int j = 0; j < nk; ++j) {
        const vf16 v = vf16_load(st + j * RL + c * 16);
        bmax = v > bmax ? v : bmax;
      }
      const vf16 m_new = bmax > m[c] ? bmax : m[c];
      shift[c] = m_new == vf16_splat(kAttnNegInf) ? vf16{} : m_new;
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
    const float* vr = kv_rows(a, a.v, a.v16, x.g, j0, nk, Scratch::f(sc.vb), &vs);
    block_pv<RV>(st, vr, vs, nk, hd, ot);
  });

  float inv[RL];
  for (int c = 0; c < RV; ++c) vf16_store(inv + c * 16, 1.0f / l[c]);  // l > 0: a query sees itself
  for (int r = 0; r < rows; ++r) {
    if (!row_in_group(L, x, r)) continue;
    float* dst = out_row(a, L, x, r);
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

// F16: the K/V are fp16 (a.k16, a.v16), widened as each vector is loaded (every value is read
// once per item here, so a widened copy would only add a pass).
template <int NV, bool F16>
void run_item_few_rows(const AttentionArgs& a, const AttentionLayout& L, const AttnItem& x, Scratch& sc) {
  constexpr int HD = NV * 16;
  const int hpi = L.heads_per_item;
  const int rows = x.nt * hpi;
  const int w = window_of(a, x.g), s = sinks_of(a, x.g);
  float* qb = Scratch::f(sc.qt);  // [rows][HD]
  float* ob = Scratch::f(sc.ot);  // [rows][HD]
  float* sb = Scratch::f(sc.st);  // [rows][64]
  float m[kAttnFewRows], l[kAttnFewRows];
  for (int r = 0; r < rows; ++r) {
    m[r] = kAttnNegInf;
    l[r] = 0.0f;
    std::fill(ob + r * HD, ob + (r + 1) * HD, 0.0f);
    std::fill(qb + r * HD, qb + (r + 1) * HD, 0.0f);
    if (!row_in_group(L, x, r)) continue;
    const float* src = query_row(a, L, x, r);
    for (int d = 0; d < HD; ++d) qb[r * HD + d] = src[d] * a.scale;
  }

  for_each_key_block(x.i0, x.i1, w, s, [&](int64_t kb) {
    const auto [j0, nk, all_visible] = key_block(x, kb, w, s);
    const int64_t at = x.g * a.kv_stride_head + j0 * a.kv_stride_pos, ps = a.kv_stride_pos;
    auto load = [&](const float* f32, const uint16_t* f16, int64_t i) {
      if constexpr (F16) return vf16_load_half(f16 + i);
      else return vf16_load(f32 + i);
    };
    for (int j = 0; j < nk; ++j) {
      vf16 kv[NV];
      for (int c = 0; c < NV; ++c) kv[c] = load(a.k, a.k16, at + j * ps + c * 16);
      for (int r = 0; r < rows; ++r) {
        vf16 acc = kv[0] * vf16_load(qb + r * HD);
        for (int c = 1; c < NV; ++c) acc += kv[c] * vf16_load(qb + r * HD + c * 16);
        sb[r * kAttnKeyBlock + j] = hsum(acc);
      }
    }
    for (int r = 0; r < rows; ++r) {
      float* sr = sb + r * kAttnKeyBlock;
      const int64_t pos = x.i0 + r / hpi;
      for (int j = nk; j < kAttnKeyBlock; ++j) sr[j] = kAttnNegInf;
      if (!all_visible)
        for (int j = 0; j < nk; ++j)
          if (!sees_key(pos, j0 + j, w, s)) sr[j] = kAttnNegInf;
      vf16 mx = vf16_load(sr);
      for (int c = 16; c < kAttnKeyBlock; c += 16) {
        const vf16 v = vf16_load(sr + c);
        mx = v > mx ? v : mx;
      }
      float bmax = mx[0];
      for (int lane = 1; lane < 16; ++lane) bmax = std::max(bmax, mx[lane]);
      const float m_new = std::max(m[r], bmax);
      const float shift = m_new == kAttnNegInf ? 0.0f : m_new;  // see run_item
      const float corr = fast_exp(m[r] - shift);
      vf16 sum{};
      for (int c = 0; c < kAttnKeyBlock; c += 16) {
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
      for (int c = 0; c < NV; ++c) vv[c] = load(a.v, a.v16, at + j * ps + c * 16);
      for (int r = 0; r < rows; ++r) {
        const float p = sb[r * kAttnKeyBlock + j];
        for (int c = 0; c < NV; ++c) vf16_store(ob + r * HD + c * 16, vf16_load(ob + r * HD + c * 16) + p * vv[c]);
      }
    }
  });

  for (int r = 0; r < rows; ++r) {
    if (!row_in_group(L, x, r)) continue;
    float* dst = out_row(a, L, x, r);
    const float inv = 1.0f / l[r];
    for (int d = 0; d < HD; ++d) dst[d] = ob[r * HD + d] * inv;
  }
}

void run_item_any(const AttentionArgs& a, const AttentionLayout& L, int64_t it, Scratch& sc) {
  const AttnItem x = item_at(a, L, it);
  if (x.nt * L.heads_per_item <= kAttnFewRows) {
    const bool f16 = a.k16 != nullptr;
    switch (a.head_dim) {
      case 16: return f16 ? run_item_few_rows<1, true>(a, L, x, sc) : run_item_few_rows<1, false>(a, L, x, sc);
      case 32: return f16 ? run_item_few_rows<2, true>(a, L, x, sc) : run_item_few_rows<2, false>(a, L, x, sc);
      case 64: return f16 ? run_item_few_rows<4, true>(a, L, x, sc) : run_item_few_rows<4, false>(a, L, x, sc);
      case 128: return f16 ? run_item_few_rows<8, true>(a, L, x, sc) : run_item_few_rows<8, false>(a, L, x, sc);
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

// Runs every item of a validated layout. Dynamic hand-out of items (most expensive first) for
// balance; results stay deterministic because each item's arithmetic does not depend on which
// thread runs it.
inline void attention_items(const AttentionArgs& a, const AttentionLayout& L) {
  std::atomic<int64_t> next{0};
  const int workers = static_cast<int>(std::min<int64_t>(num_threads(), L.n_items));
  parallel_for(workers, [&](size_t, size_t) {
    Scratch sc(a.head_dim, a.k16 != nullptr);
    for (int64_t it = next.fetch_add(1); it < L.n_items; it = next.fetch_add(1)) run_item_any(a, L, it, sc);
  });
}

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
