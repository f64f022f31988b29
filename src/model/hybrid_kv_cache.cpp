#include "model/hybrid_kv_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "util/error.h"
#include "util/memory_budget.h"
#include "util/parallel.h"
#include "util/splitmix.h"

namespace bosch {

namespace {

constexpr int64_t kGrowTokens = 256;  // capacity grows to a multiple of this many positions

// Transient buffers of one attend() call: gathered queries/outputs of a non-contiguous head
// group and the position-ordered K/V sequence of an SWA group during chunked prefill.
struct Workspace {
  std::vector<float> q, out, k, v;
  std::vector<uint16_t> h;  // an fp16 cache's chunk, rounded through fp16 like the stored values
};
thread_local Workspace tls_ws;

template <class T>
T* grow(std::vector<T>& b, size_t n) {
  if (b.size() < n) b.resize(n);
  return b.data();
}
float* as_f32(CountedBytes& b) { return reinterpret_cast<float*>(b.data()); }
const float* as_f32(const CountedBytes& b) { return reinterpret_cast<const float*>(b.data()); }
uint16_t* as_f16(CountedBytes& b) { return reinterpret_cast<uint16_t*>(b.data()); }
const uint16_t* as_f16(const CountedBytes& b) { return reinterpret_cast<const uint16_t*>(b.data()); }

}  // namespace

int64_t hybrid_kv_bytes(const ModelConfig& cfg, const AttentionPlan& plan, int64_t tokens, KvType type) {
  check(plan.n_layers() == cfg.n_layers && plan.n_kv_heads() == cfg.n_kv_heads,
        "attention plan is {} layers x {} KV heads, the model has {} x {}", plan.n_layers(),
        plan.n_kv_heads(), cfg.n_layers, cfg.n_kv_heads);
  int64_t positions = 0;  // summed over (layer, KV head)
  for (int l = 0; l < cfg.n_layers; ++l)
    for (int h = 0; h < cfg.n_kv_heads; ++h)
      positions += plan.is_swa(l, h)
                       ? std::min<int64_t>(tokens, int64_t(plan.window(l, h)) + plan.sinks(l, h))
                       : tokens;
  return positions * cfg.head_dim * 2 * kv_type_bytes(type);
}

int64_t hybrid_kv_bytes_per_token(const ModelConfig& cfg, const AttentionPlan& plan, KvType type) {
  int64_t full = int64_t(cfg.n_layers) * cfg.n_kv_heads - plan.count_swa();
  return full * cfg.head_dim * 2 * kv_type_bytes(type);
}

HybridKVCache::HybridKVCache(const ModelConfig& cfg, const AttentionPlan& plan, int64_t max_tokens, KvType type)
    : cfg_(cfg), plan_(plan), type_(type), allocated_(std::make_unique<std::atomic<int64_t>>(0)) {
  check(plan.n_layers() == cfg.n_layers && plan.n_kv_heads() == cfg.n_kv_heads,
        "hybrid KV cache: attention plan is {} layers x {} KV heads, the model has {} x {}",
        plan.n_layers(), plan.n_kv_heads(), cfg.n_layers, cfg.n_kv_heads);
  check(cfg.n_kv_heads > 0 && cfg.head_dim > 0 && cfg.n_heads % cfg.n_kv_heads == 0,
        "hybrid KV cache: bad head shape ({} heads, {} KV heads, head_dim {})", cfg.n_heads,
        cfg.n_kv_heads, cfg.head_dim);
  check(max_tokens >= 0, "hybrid KV cache: capacity must be >= 0, got {}", max_tokens);
  CountingAllocator<uint8_t> alloc(allocated_.get());
  layers_.resize(cfg.n_layers);
  for (int l = 0; l < cfg.n_layers; ++l) {
    // Full heads first, then one group per distinct (W, S) in order of appearance.
    std::map<std::pair<int, int>, int> key_to_group;
    auto& groups = layers_[l].groups;
    for (int h = 0; h < cfg.n_kv_heads; ++h) {
      std::pair<int, int> key{plan.window(l, h), plan.is_swa(l, h) ? plan.sinks(l, h) : 0};
      auto it = key_to_group.find(key);
      if (it == key_to_group.end()) {
        it = key_to_group.emplace(key, static_cast<int>(groups.size())).first;
        groups.push_back(Group{{}, key.first, key.second, 0, CountedBytes(alloc), CountedBytes(alloc), {}, {}});
      }
      groups[it->second].heads.push_back(h);
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Group& a, const Group& b) { return (a.window == 0) > (b.window == 0); });
    for (auto& g : groups) {
      g.kernel_window.assign(g.heads.size(), g.window);
      g.kernel_sinks.assign(g.heads.size(), g.sinks);
    }
  }
  reserve(max_tokens);
}

void HybridKVCache::grow_group(Group& g, int64_t new_slots) {
  if (new_slots <= g.slots) return;
  const int64_t row = int64_t(g.heads.size()) * cfg_.head_dim * kv_type_bytes(type_);  // bytes per slot
  // Exact-size buffers (std::vector::resize may over-allocate geometrically). Slots already
  // filled keep their meaning: below W + S an SWA slot index equals the position.
  for (CountedBytes* buf : {&g.k, &g.v}) {
    CountedBytes nb(buf->get_allocator());
    nb.reserve(static_cast<size_t>(new_slots * row));
    nb.assign(buf->begin(), buf->begin() + g.slots * row);
    nb.resize(static_cast<size_t>(new_slots * row));
    buf->swap(nb);
  }
  g.slots = new_slots;
}

void HybridKVCache::reserve(int64_t tokens) {
  if (tokens <= capacity_) return;
  uint64_t more = 0;  // the new buffers' bytes, checked before any is made
  for (auto& L : layers_)
    for (auto& g : L.groups)
      more += uint64_t(2) * static_cast<uint64_t>(std::max<int64_t>(0, g.slots_for(tokens) - g.slots)) * g.heads.size() *
              static_cast<uint64_t>(cfg_.head_dim) * kv_type_bytes(type_);
  check_memory_for(more, fmt::format("a hybrid KV cache of {} tokens ({})", tokens, kv_type_name(type_)));
  for (auto& L : layers_)
    for (auto& g : L.groups) grow_group(g, g.slots_for(tokens));
  capacity_ = tokens;
}

int64_t HybridKVCache::buffer_capacity_bytes() const {
  int64_t b = 0;
  for (auto& L : layers_)
    for (auto& g : L.groups) b += int64_t(g.k.capacity() + g.v.capacity());
  return b;
}

void HybridKVCache::put(CountedBytes& b, int64_t at, const float* src, int64_t n) const {
  if (type_ == KvType::F16)
    floats_to_halves(src, as_f16(b) + at, n);
  else
    std::memcpy(as_f32(b) + at, src, sizeof(float) * static_cast<size_t>(n));
}

void HybridKVCache::get(const CountedBytes& b, int64_t at, float* dst, int64_t n) const {
  if (type_ == KvType::F16)
    halves_to_floats(as_f16(b) + at, dst, n);
  else
    std::memcpy(dst, as_f32(b) + at, sizeof(float) * static_cast<size_t>(n));
}

void HybridKVCache::point_at(const Group& g, AttentionArgs& a) const {
  if (type_ == KvType::F16) {
    a.k16 = as_f16(g.k);
    a.v16 = as_f16(g.v);
  } else {
    a.k = as_f32(g.k);
    a.v = as_f32(g.v);
  }
}

int64_t HybridKVCache::workspace_bytes() const {
  auto& w = tls_ws;
  return int64_t(w.q.capacity() + w.out.capacity() + w.k.capacity() + w.v.capacity()) * int64_t(sizeof(float)) +
         int64_t(w.h.capacity() * sizeof(uint16_t));
}

void HybridKVCache::clear() {
  length_ = 0;
  for (auto& L : layers_) L.filled = 0;
}

// Writes the K/V of chunk tokens [0, n) (positions pos0..) into their slots. For an SWA group
// only sinks and the last W positions are written: earlier ones would be overwritten anyway.
void HybridKVCache::store_tokens(Group& g, const float* k, const float* v, int n, int64_t pos0) {
  const int hd = cfg_.head_dim, ng = static_cast<int>(g.heads.size());
  const int64_t src_stride = int64_t(cfg_.n_kv_heads) * hd, row = int64_t(ng) * hd;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t p = pos0 + t;
    if (g.window != 0 && p >= g.sinks && p < pos0 + n - g.window) continue;
    const int64_t slot = g.slot_of(p);
    for (int gi = 0; gi < ng; ++gi) {
      const int64_t src = t * src_stride + int64_t(g.heads[gi]) * hd;
      put(g.k, slot * row + gi * hd, k + src, hd);
      put(g.v, slot * row + gi * hd, v + src, hd);
    }
  }
}

void HybridKVCache::attend_group(Group& g, const float* q, const float* k, const float* v, float* out,
                                 int n, int64_t pos0) {
  const int hd = cfg_.head_dim, nh = cfg_.n_heads, G = cfg_.group_size();
  const int ng = static_cast<int>(g.heads.size());
  const int64_t q_row = int64_t(nh) * hd, gq_row = int64_t(ng) * G * hd, kv_row = int64_t(ng) * hd;
  auto& ws = tls_ws;

  // Queries of the group's heads: used in place when the KV heads are consecutive, else gathered.
  bool consecutive = true;
  for (int gi = 1; gi < ng; ++gi) consecutive &= g.heads[gi] == g.heads[0] + gi;
  const float* qg;
  float* og;
  int64_t qs;
  if (consecutive) {
    qg = q + int64_t(g.heads[0]) * G * hd;
    og = out + int64_t(g.heads[0]) * G * hd;
    qs = q_row;
  } else {
    float* gq = grow(ws.q, static_cast<size_t>(n * gq_row));
    og = grow(ws.out, static_cast<size_t>(n * gq_row));
    for (int t = 0; t < n; ++t)
      for (int gi = 0; gi < ng; ++gi)
        std::memcpy(gq + t * gq_row + int64_t(gi) * G * hd, q + t * q_row + int64_t(g.heads[gi]) * G * hd,
                    sizeof(float) * G * hd);
    qg = gq;
    qs = gq_row;
  }

  AttentionArgs a;
  a.q = qg;
  a.q_stride_tok = qs;
  a.q_stride_head = hd;
  a.out = og;
  a.o_stride_tok = qs;
  a.o_stride_head = hd;
  a.kv_stride_pos = kv_row;
  a.kv_stride_head = hd;
  a.n_q = n;
  a.n_heads = ng * G;
  a.n_kv_heads = ng;
  a.head_dim = hd;
  a.scale = 1.0f / std::sqrt(static_cast<float>(hd));

  if (g.window == 0) {
    store_tokens(g, k, v, n, pos0);
    point_at(g, a);
    a.q_pos0 = pos0;
    attention(a);
  } else if (n == 1) {
    // After storing the token every filled slot is visible to it: full attention over slots.
    store_tokens(g, k, v, n, pos0);
    const int64_t filled = std::min<int64_t>(pos0 + 1, int64_t(g.window) + g.sinks);
    point_at(g, a);
    a.q_pos0 = filled - 1;
    attention(a);
  } else {
    // Position-ordered sequence: sinks, the W-1 positions before pos0, then the chunk; the gap
    // between sinks and window (if any) is removed, shifting queries and keys alike.
    const int64_t W = g.window, S = g.sinks;
    const int64_t recent0 = pos0 - W + 1;
    const bool gap = recent0 > S;
    const int64_t vq0 = gap ? S + (pos0 - recent0) : pos0;
    float* sk = grow(ws.k, static_cast<size_t>((vq0 + n) * kv_row));
    float* sv = grow(ws.v, static_cast<size_t>((vq0 + n) * kv_row));
    int64_t vrow = 0;
    auto copy_stored = [&](int64_t p) {
      const int64_t slot = g.slot_of(p);
      get(g.k, slot * kv_row, sk + vrow * kv_row, kv_row);
      get(g.v, slot * kv_row, sv + vrow * kv_row, kv_row);
      ++vrow;
    };
    if (gap) {
      for (int64_t p = 0; p < S; ++p) copy_stored(p);
      for (int64_t p = recent0; p < pos0; ++p) copy_stored(p);
    } else {
      for (int64_t p = 0; p < pos0; ++p) copy_stored(p);
    }
    const int64_t src_stride = int64_t(cfg_.n_kv_heads) * hd;
    for (int t = 0; t < n; ++t)
      for (int gi = 0; gi < ng; ++gi) {
        const int64_t src = t * src_stride + int64_t(g.heads[gi]) * hd;
        std::memcpy(sk + (vq0 + t) * kv_row + gi * hd, k + src, sizeof(float) * hd);
        std::memcpy(sv + (vq0 + t) * kv_row + gi * hd, v + src, sizeof(float) * hd);
      }
    if (type_ == KvType::F16) {  // the chunk as the cache will hold it: what a store-then-read would give
      uint16_t* h = grow(ws.h, static_cast<size_t>(n * kv_row));
      for (float* x : {sk + vq0 * kv_row, sv + vq0 * kv_row}) {
        floats_to_halves(x, h, n * kv_row);
        halves_to_floats(h, x, n * kv_row);
      }
    }
    a.k = sk;
    a.v = sv;
    a.q_pos0 = vq0;
    a.window = g.kernel_window.data();
    a.sinks = g.kernel_sinks.data();
    attention(a);
    store_tokens(g, k, v, n, pos0);
  }

  if (!consecutive)
    for (int t = 0; t < n; ++t)
      for (int gi = 0; gi < ng; ++gi)
        std::memcpy(out + t * q_row + int64_t(g.heads[gi]) * G * hd, og + t * gq_row + int64_t(gi) * G * hd,
                    sizeof(float) * G * hd);
}

void HybridKVCache::attend(int layer, const float* q, const float* k, const float* v, float* out, int n,
                           int64_t pos0) {
  check(layer >= 0 && layer < cfg_.n_layers, "hybrid KV cache: layer {} out of range [0, {})", layer,
        cfg_.n_layers);
  check(n >= 0, "hybrid KV cache: negative token count {}", n);
  check(pos0 == length_, "hybrid KV cache: new tokens start at position {}, the cache holds {}", pos0,
        length_);
  Layer& L = layers_[layer];
  check(L.filled == length_,
        "hybrid KV cache: layer {} already holds {} positions, {} committed (attend twice before commit?)",
        layer, L.filled, length_);
  if (n == 0) return;
  if (pos0 + n > capacity_) reserve((pos0 + n + kGrowTokens - 1) / kGrowTokens * kGrowTokens);
  for (auto& g : L.groups) attend_group(g, q, k, v, out, n, pos0);
  L.filled = pos0 + n;
}

void HybridKVCache::commit(int64_t new_length) {
  check(new_length >= length_, "hybrid KV cache: commit({}) below the committed length {}", new_length,
        length_);
  for (int l = 0; l < cfg_.n_layers; ++l)
    check(layers_[l].filled == new_length,
          "hybrid KV cache: commit({}) but layer {} holds {} positions (every layer must see the new "
          "tokens before commit)",
          new_length, l, layers_[l].filled);
  length_ = new_length;
}

void HybridKVCache::fill_synthetic(int64_t tokens, uint64_t seed) {
  check(tokens >= length_, "fill_synthetic: {} tokens is below the current length {}", tokens, length_);
  for (int l = 0; l < cfg_.n_layers; ++l)
    check(layers_[l].filled == length_, "fill_synthetic: layer {} has uncommitted tokens", l);
  reserve(tokens);
  const int hd = cfg_.head_dim;
  const int64_t from = length_;
  parallel_for(layers_.size(), [&](size_t lb, size_t le) {
    for (size_t l = lb; l < le; ++l) {
      for (size_t gi = 0; gi < layers_[l].groups.size(); ++gi) {
        Group& g = layers_[l].groups[gi];
        uint64_t s = seed ^ (kSplitmixGamma * (l * 64 + gi + 1));
        auto next = [&s] {  // uniform in [-1, 1) from the top 24 bits
          return static_cast<float>(splitmix64(s) >> 40) * (2.0f / 16777216.0f) - 1.0f;
        };
        const int64_t row = int64_t(g.heads.size()) * hd;
        for (int64_t p = from; p < tokens; ++p) {
          if (g.window != 0 && p >= g.sinks && p < tokens - g.window) continue;
          const int64_t slot = g.slot_of(p);
          for (CountedBytes* b : {&g.k, &g.v})
            for (int64_t i = 0; i < row; ++i) {
              const float x = next();
              put(*b, slot * row + i, &x, 1);
            }
        }
      }
      layers_[l].filled = tokens;
    }
  });
  length_ = tokens;
}

}  // namespace bosch
