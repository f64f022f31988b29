// The hybrid KV cache (ring buffers for SWA heads) against (a) a naive attention over the whole
// history with the visibility rule, at the KVStore level, and (b) the plain masked engine
// (model/KVCache keeping every position) through the model: logits, greedy tokens, memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "formats/dtype.h"
#include "model/generate.h"
#include "model/hybrid_kv_cache.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "util/error.h"

namespace {

using namespace bosch;

ModelConfig small_config(int n_layers, int n_heads, int n_kv, int hd) {
  ModelConfig c;
  c.arch = "llama";
  c.n_layers = n_layers;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv;
  c.head_dim = hd;
  c.d_model = n_heads * hd;
  c.d_ff = 32;
  c.vocab_size = 64;
  return c;
}

// Naive attention of query position i for one query head over the full history of a layer.
void naive(const std::vector<float>& K, const std::vector<float>& V, const float* q, int64_t i, int kv_head,
           int n_kv, int hd, int W, int S, float* out) {
  std::vector<double> w;
  std::vector<int64_t> idx;
  double mx = -1e300;
  for (int64_t j = 0; j <= i; ++j) {
    if (W > 0 && !(i - j < W || j < S)) continue;
    double s = 0;
    for (int d = 0; d < hd; ++d) s += double(q[d]) * K[(j * n_kv + kv_head) * hd + d];
    s /= std::sqrt(double(hd));
    w.push_back(s);
    idx.push_back(j);
    mx = std::max(mx, s);
  }
  double sum = 0;
  for (auto& x : w) sum += x = std::exp(x - mx);
  for (int d = 0; d < hd; ++d) {
    double acc = 0;
    for (size_t t = 0; t < w.size(); ++t) acc += w[t] * V[(idx[t] * n_kv + kv_head) * hd + d];
    out[d] = static_cast<float>(acc / sum);
  }
}

// Drives a KVStore directly with random q/k/v in chunks and checks every output against the
// naive definition. Returns the max abs error. round_f16: k and v are made fp16 values first
// (what an fp16 cache stores exactly), so the naive definition sees what the cache holds.
double run_store_vs_naive(KVStore& store, const ModelConfig& c, const AttentionPlan& plan,
                          const std::vector<int>& chunks, uint32_t seed, bool round_f16 = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int nh = c.n_heads, nkv = c.n_kv_heads, hd = c.head_dim, G = nh / nkv;
  std::vector<std::vector<float>> K(c.n_layers), V(c.n_layers);
  double max_err = 0;
  int64_t pos = 0;
  for (int n : chunks) {
    for (int l = 0; l < c.n_layers; ++l) {
      std::vector<float> q(size_t(n) * nh * hd), k(size_t(n) * nkv * hd), v(size_t(n) * nkv * hd),
          out(size_t(n) * nh * hd, -7.0f);
      for (auto& x : q) x = 2.0f * nd(rng);  // peaky enough that a wrong key set shows
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      if (round_f16)
        for (auto* kv : {&k, &v})
          for (auto& x : *kv) x = f16_to_f32(f32_to_f16(x));
      K[l].insert(K[l].end(), k.begin(), k.end());
      V[l].insert(V[l].end(), v.begin(), v.end());
      store.attend(l, q.data(), k.data(), v.data(), out.data(), n, pos);
      std::vector<float> ref(hd);
      for (int t = 0; t < n; ++t)
        for (int h = 0; h < nh; ++h) {
          const int g = h / G;
          naive(K[l], V[l], &q[(size_t(t) * nh + h) * hd], pos + t, g, nkv, hd, plan.window(l, g),
                plan.sinks(l, g), ref.data());
          for (int d = 0; d < hd; ++d)
            max_err = std::max(max_err, double(std::fabs(ref[d] - out[(size_t(t) * nh + h) * hd + d])));
        }
    }
    pos += n;
    store.commit(pos);
  }
  return max_err;
}

// Layer 0: SWA heads 0 and 2 (not consecutive: gathered queries), head 1 full.
// Layer 1: two SWA groups with different (W, S) and a full head. Layer 2: all SWA, no sinks.
AttentionPlan mixed_plan(int W, int S) {
  AttentionPlan p(3, 3);
  p.set_swa(0, 0, W, S);
  p.set_swa(0, 2, W, S);
  p.set_swa(1, 0, W / 2 + 1, 0);
  p.set_swa(1, 1, W, S + 1);
  for (int h = 0; h < 3; ++h) p.set_swa(2, h, W, 0);
  return p;
}

TEST(HybridKVCache, MatchesNaiveAttentionOverChunksAndRingWraps) {
  const int W = 8, S = 2;
  ModelConfig c = small_config(3, 6, 3, 8);
  AttentionPlan plan = mixed_plan(W, S);
  // Chunk sizes 1, 7, W, 3W (larger than the ring), then many single-token steps past W.
  std::vector<int> chunks = {1, 7, W, 3 * W, 1, 7, 2, 3 * W + 5};
  for (int i = 0; i < 60; ++i) chunks.push_back(1);
  for (KvType type : {KvType::F32, KvType::F16}) {
    HybridKVCache cache(c, plan, 0, type);  // no reservation: grows on demand
    double err = run_store_vs_naive(cache, c, plan, chunks, 7, type == KvType::F16);
    EXPECT_LT(err, 2e-5) << kv_type_name(type);
    int64_t total = 0;
    for (int n : chunks) total += n;
    EXPECT_EQ(cache.length(), total);
    EXPECT_EQ(cache.bytes(), hybrid_kv_bytes(c, plan, cache.capacity(), type));
  }
}

TEST(HybridKVCache, FirstChunkLongerThanWindowAndSinksBeyondWindow) {
  ModelConfig c = small_config(3, 6, 3, 8);
  for (auto [W, S] : {std::pair{1, 0}, std::pair{1, 3}, std::pair{4, 9}, std::pair{5, 0}}) {
    AttentionPlan plan = AttentionPlan::all_swa(3, 3, W, S);
    plan.set_full(1, 1);
    HybridKVCache cache(c, plan, 7);
    double err = run_store_vs_naive(cache, c, plan, {40, 1, 1, 13, 1, 3 * W + 2, 1, 1}, 11);
    EXPECT_LT(err, 2e-5) << "W=" << W << " S=" << S;
  }
}

TEST(HybridKVCache, TheNaiveCheckCanFail) {
  // The same driver with a plan that differs from the one the reference uses must fail, so the
  // tolerance above discriminates a wrong key set.
  const int W = 8, S = 2;
  ModelConfig c = small_config(3, 6, 3, 8);
  AttentionPlan plan = mixed_plan(W, S);
  AttentionPlan wider = mixed_plan(W + 1, S);
  // A cache built for `wider` against a naive run for `plan` must differ once past the window.
  KVCache plain(c, plan, 200);
  double err_same = run_store_vs_naive(plain, c, plan, {30, 1, 1}, 3);
  EXPECT_LT(err_same, 2e-5);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  std::vector<float> qq(30 * 6 * 8), kk(30 * 3 * 8), vv(30 * 3 * 8), o1(30 * 6 * 8), o2(30 * 6 * 8);
  for (auto* vec : {&qq, &kk, &vv})
    for (auto& x : *vec) x = 2.0f * nd(rng);
  HybridKVCache a(c, plan), b(c, wider);
  a.attend(0, qq.data(), kk.data(), vv.data(), o1.data(), 30, 0);
  b.attend(0, qq.data(), kk.data(), vv.data(), o2.data(), 30, 0);
  double diff = 0;
  for (size_t i = 0; i < o1.size(); ++i) diff = std::max(diff, double(std::fabs(o1[i] - o2[i])));
  EXPECT_GT(diff, 1e-2);
}

TEST(HybridKVCache, BytesMatchFormulaExactly) {
  const int W = 16, S = 4;
  ModelConfig c = small_config(3, 6, 3, 8);
  AttentionPlan plan = mixed_plan(W, S);
  for (int64_t T : {0, 1, 5, 9, 19, 20, 21, 23, 24, 25, 100, 1000}) {
    HybridKVCache cache(c, plan, T);
    EXPECT_EQ(cache.capacity(), T);
    EXPECT_EQ(cache.bytes(), hybrid_kv_bytes(c, plan, T)) << "T=" << T;
    EXPECT_EQ(cache.buffer_capacity_bytes(), cache.bytes()) << "T=" << T;
  }
  // Hand-computed at T = 1000 (hd 8, K+V, 4 bytes): layer 0: 1 full + 2 x (16+4);
  // layer 1: 1 full + (9+0) + (16+5); layer 2: 3 x 16.
  const int64_t per_pos = 8 * 2 * 4;
  EXPECT_EQ(hybrid_kv_bytes(c, plan, 1000), per_pos * ((1000 + 40) + (1000 + 9 + 21) + 48));
  EXPECT_EQ(hybrid_kv_bytes_per_token(c, plan), per_pos * 2);
  // All full: the plain formula.
  AttentionPlan full = AttentionPlan::full(3, 3);
  EXPECT_EQ(hybrid_kv_bytes(c, full, 77), 77 * c.kv_bytes_per_token());
  HybridKVCache fc(c, full, 77);
  KVCache plain(c, full, 77);
  EXPECT_EQ(fc.bytes(), plain.bytes());
}

TEST(HybridKVCache, GrowsInBlocksAndStillMatchesFormula) {
  const int W = 16, S = 4;
  ModelConfig c = small_config(3, 6, 3, 8);
  AttentionPlan plan = mixed_plan(W, S);
  HybridKVCache cache(c, plan);
  EXPECT_EQ(cache.bytes(), 0);
  std::vector<float> q(300 * 48), k(300 * 24), v(300 * 24), out(300 * 48);
  for (size_t i = 0; i < k.size(); ++i) k[i] = v[i] = float(i % 13) * 0.1f;
  for (size_t i = 0; i < q.size(); ++i) q[i] = float(i % 7) * 0.1f;
  int64_t pos = 0;
  for (int n : {1, 10, 300, 1}) {
    for (int l = 0; l < 3; ++l) cache.attend(l, q.data(), k.data(), v.data(), out.data(), n, pos);
    pos += n;
    cache.commit(pos);
    EXPECT_EQ(cache.capacity() % 256, 0);
    EXPECT_GE(cache.capacity(), pos);
    EXPECT_EQ(cache.bytes(), hybrid_kv_bytes(c, plan, cache.capacity())) << "pos=" << pos;
    EXPECT_EQ(cache.buffer_capacity_bytes(), cache.bytes());
  }
  EXPECT_EQ(cache.capacity(), 512);
}

TEST(HybridKVCache, RefusesMisuse) {
  ModelConfig c = small_config(3, 6, 3, 8);
  AttentionPlan plan = mixed_plan(8, 2);
  EXPECT_THROW(HybridKVCache(c, AttentionPlan::full(2, 3)), Error);
  EXPECT_THROW(KVCache(c, AttentionPlan::full(3, 2), 10), Error);
  HybridKVCache cache(c, plan);
  std::vector<float> q(48), k(24), v(24), out(48);
  EXPECT_THROW(cache.attend(0, q.data(), k.data(), v.data(), out.data(), 1, 5), Error);  // wrong pos0
  cache.attend(0, q.data(), k.data(), v.data(), out.data(), 1, 0);
  EXPECT_THROW(cache.attend(0, q.data(), k.data(), v.data(), out.data(), 1, 0), Error);  // twice
  EXPECT_THROW(cache.commit(1), Error);  // layers 1, 2 have not seen the token
}

// ---- Through the model: hybrid cache vs the plain masked engine ---------------------------

Model tiny_model(uint64_t seed) {
  ModelConfig c = config_like("qwen3", "tiny");  // 3 layers, 8 heads / 4 KV, hd 16
  // Larger weights than the default 0.02 so attention is far from uniform and a wrong key set
  // changes the logits well above the tolerance.
  return Model(c, random_weights(c, seed, 0.15f), "random-tiny");
}

AttentionPlan model_plan(const ModelConfig& c, int W, int S) {
  AttentionPlan p(c.n_layers, c.n_kv_heads);
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_kv_heads; ++h)
      if ((l + h) % 4 != 0) p.set_swa(l, h, W, S);  // 3 of 4 heads SWA, different ones per layer
  return p;
}

std::vector<int32_t> random_tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng() % vocab);
  return t;
}

// Feeds the prompt in chunks of the given sizes (cycled) to both caches, then decodes
// `steps` tokens greedily (from the plain engine's logits, so both see the same stream).
// Returns the max abs logit difference over every step.
double compare_with_plain(const Model& m, const AttentionPlan& plan, int prompt_len, std::vector<int> chunk_cycle,
                          int steps, KvType type = KvType::F32) {
  const auto& c = m.config();
  KVCache plain(c, plan, prompt_len + steps + 1, type);
  HybridKVCache hybrid(c, plan, prompt_len + steps + 1, type);
  auto prompt = random_tokens(prompt_len, c.vocab_size, 3);
  double max_diff = 0;
  std::vector<float> lp, lh;
  size_t ci = 0;
  for (int pos = 0; pos < prompt_len;) {
    int n = std::min(chunk_cycle[ci++ % chunk_cycle.size()], prompt_len - pos);
    std::vector<int32_t> chunk(prompt.begin() + pos, prompt.begin() + pos + n);
    lp = m.forward_next(chunk, plain);
    lh = m.forward_next(chunk, hybrid);
    for (size_t i = 0; i < lp.size(); ++i) max_diff = std::max(max_diff, double(std::fabs(lp[i] - lh[i])));
    pos += n;
  }
  for (int s = 0; s < steps; ++s) {
    int32_t next = static_cast<int32_t>(std::max_element(lp.begin(), lp.end()) - lp.begin());
    lp = m.forward_next({next}, plain);
    lh = m.forward_next({next}, hybrid);
    for (size_t i = 0; i < lp.size(); ++i) max_diff = std::max(max_diff, double(std::fabs(lp[i] - lh[i])));
  }
  EXPECT_EQ(hybrid.bytes(), hybrid_kv_bytes(c, plan, prompt_len + steps + 1, type));
  EXPECT_LT(hybrid.bytes(), plain.bytes());
  return max_diff;
}

TEST(HybridKVCacheModel, LogitsMatchPlainMaskedEngineForEachChunkSize) {
  Model m = tiny_model(1);
  const int W = 16, S = 4;
  AttentionPlan plan = model_plan(m.config(), W, S);
  for (int chunk : {1, 7, W, 3 * W}) {
    double diff = compare_with_plain(m, plan, 4 * W + 3, {chunk}, chunk == 1 ? 210 : 20);
    EXPECT_LT(diff, 1e-4) << "chunk " << chunk;
  }
  // Mixed chunk sizes, then 200+ decode steps far past the window.
  EXPECT_LT(compare_with_plain(m, plan, 5 * W, {7, 1, 3 * W, W}, 220), 1e-4);
}

TEST(HybridKVCacheModel, ToleranceDiscriminatesPlans) {
  // The SWA plan must change the logits by far more than the tolerance, else the test above
  // could not see a ring-buffer bug.
  Model m = tiny_model(1);
  const auto& c = m.config();
  auto toks = random_tokens(80, c.vocab_size, 3);
  auto a = m.forward_all(toks, model_plan(c, 16, 4));
  auto b = m.forward_all(toks, AttentionPlan::full(c.n_layers, c.n_kv_heads));
  double diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, double(std::fabs(a[i] - b[i])));
  EXPECT_GT(diff, 1e-2);
}

TEST(HybridKVCacheModel, AllFullPlanIsIdenticalToPlain) {
  Model m = tiny_model(2);
  const auto& c = m.config();
  AttentionPlan full = AttentionPlan::full(c.n_layers, c.n_kv_heads);
  KVCache plain(c, full, 200);
  HybridKVCache hybrid(c, full, 200);
  auto toks = random_tokens(150, c.vocab_size, 9);
  for (int pos = 0, n = 1; pos < 150; pos += n, n = n % 19 + 3) {
    n = std::min(n, 150 - pos);
    std::vector<int32_t> chunk(toks.begin() + pos, toks.begin() + pos + n);
    auto lp = m.forward_next(chunk, plain);
    auto lh = m.forward_next(chunk, hybrid);
    ASSERT_EQ(lp, lh) << "at position " << pos;  // same kernel, same layout: bit-identical
  }
}

TEST(HybridKVCacheModel, GreedyTokensIdentical) {
  Model m = tiny_model(3);
  const auto& c = m.config();
  AttentionPlan plan = model_plan(c, 12, 2);
  auto prompt = random_tokens(40, c.vocab_size, 5);
  SamplingParams p;
  p.max_tokens = 200;
  auto plain = generate(m, plan, prompt, p);
  HybridKVCache cache(c, plan);
  auto hybrid = generate(m, cache, prompt, p);
  ASSERT_EQ(plain.size(), 200u);
  EXPECT_EQ(plain, hybrid);
}

TEST(HybridKVCache, SyntheticFillKeepsFormulaAndDecodes) {
  Model m = tiny_model(4);
  const auto& c = m.config();
  AttentionPlan plan = model_plan(c, 16, 4);
  for (KvType type : {KvType::F32, KvType::F16}) {
    HybridKVCache cache(c, plan, 301, type);
    cache.fill_synthetic(300, 1);
    EXPECT_EQ(cache.length(), 300);
    auto logits = m.forward_next({5}, cache);
    EXPECT_EQ(cache.length(), 301);
    for (float x : logits) ASSERT_TRUE(std::isfinite(x));
    EXPECT_EQ(cache.bytes(), hybrid_kv_bytes(c, plan, 301, type)) << kv_type_name(type);
  }
}

}  // namespace

namespace {

TEST(HybridKVCacheModel, Fp16CachesAgreeWithEachOtherAndHalveTheBytes) {
  // The fp16 hybrid cache against the fp16 plain cache: same stored halves, so the same logits
  // (chunked prefill rounds its chunk through fp16 as a store-then-read would), for each chunk
  // size and far past the window.
  Model m = tiny_model(1);
  const auto& c = m.config();
  const int W = 16, S = 4;
  AttentionPlan plan = model_plan(c, W, S);
  for (int chunk : {1, 7, W, 3 * W})
    EXPECT_LT(compare_with_plain(m, plan, 4 * W + 3, {chunk}, chunk == 1 ? 120 : 20, KvType::F16), 1e-4) << "chunk " << chunk;
  EXPECT_EQ(hybrid_kv_bytes(c, plan, 1000, KvType::F16) * 2, hybrid_kv_bytes(c, plan, 1000));
  EXPECT_EQ(hybrid_kv_bytes_per_token(c, plan, KvType::F16) * 2, hybrid_kv_bytes_per_token(c, plan));
  KVCache p16(c, plan, 100, KvType::F16), p32(c, plan, 100);
  EXPECT_EQ(p16.bytes() * 2, p32.bytes());

  // fp16 against float32: close, but not the same numbers (the halves are really what is read).
  auto toks = random_tokens(90, c.vocab_size, 5);
  KVCache a(c, plan, 100, KvType::F16), b(c, plan, 100);
  HybridKVCache ha(c, plan, 100, KvType::F16);
  std::vector<int32_t> first(toks.begin(), toks.begin() + 60);
  auto la = m.forward_next(first, a), lb = m.forward_next(first, b), lh = m.forward_next(first, ha);
  double diff = 0, hdiff = 0;
  for (int s = 60; s < 90; ++s) {
    for (size_t i = 0; i < la.size(); ++i) {
      diff = std::max(diff, double(std::fabs(la[i] - lb[i])));
      hdiff = std::max(hdiff, double(std::fabs(la[i] - lh[i])));
    }
    la = m.forward_next({toks[s]}, a), lb = m.forward_next({toks[s]}, b), lh = m.forward_next({toks[s]}, ha);
  }
  EXPECT_GT(diff, 1e-6);
  EXPECT_LT(diff, 0.05);
  EXPECT_LT(hdiff, 3e-4) << "fp16 vs f32 " << diff;  // float summation order; fp16 itself moves 4e-3
}

TEST(KvType, ParsesItsTwoNamesAndRefusesOthers) {
  EXPECT_EQ(parse_kv_type("f32"), KvType::F32);
  EXPECT_EQ(parse_kv_type("f16"), KvType::F16);
  EXPECT_STREQ(kv_type_name(KvType::F16), "f16");
  EXPECT_THROW(parse_kv_type("q8_0"), Error);
}

}  // namespace

