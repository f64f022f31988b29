// The blocked attention kernel against the naive definition, over many shapes, windows, sinks,
// GQA ratios, positions and memory layouts; plus block skipping and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "formats/dtype.h"
#include "kernels/attention.h"
#include "util/error.h"
#include "util/parallel.h"

namespace {

using bosch::AttentionArgs;

struct Case {
  int n_q = 1;
  int64_t q_pos0 = 0;
  int n_heads = 1, n_kv_heads = 1, head_dim = 16;
  std::vector<int32_t> window, sinks;  // per KV head
  bool head_major = false;             // K/V as [head][pos][d] instead of [pos][head][d]
  int pad = 0;                         // extra floats after each vector (strided layouts)
  float q_gain = 1.0f;                 // > 1 makes the softmax peaky
  uint32_t seed = 1;
  bool f16 = false;                    // K/V handed over as fp16 (an fp16 KV cache)
};

std::string describe(const Case& c) {
  std::string s = std::string(c.f16 ? "fp16 K/V " : "") + "n_q=" + std::to_string(c.n_q) + " pos0=" + std::to_string(c.q_pos0) +
                  " heads=" + std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) +
                  " hd=" + std::to_string(c.head_dim) + " head_major=" + std::to_string(c.head_major) +
                  " pad=" + std::to_string(c.pad) + " W,S=";
  for (size_t g = 0; g < c.window.size(); ++g)
    s += std::to_string(c.window[g]) + "," + std::to_string(c.sinks[g]) + " ";
  return s;
}

// Owns the tensors of one case and builds AttentionArgs over them.
struct Tensors {
  Case c;
  std::vector<float> q, k, v, out;
  std::vector<uint16_t> k16, v16;
  AttentionArgs args;

  explicit Tensors(const Case& cs) : c(cs) {
    std::mt19937 rng(c.seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const int64_t n_pos = c.q_pos0 + c.n_q;
    const int64_t vec = c.head_dim + c.pad;
    k.resize(n_pos * c.n_kv_heads * vec);
    v.resize(k.size());
    for (auto& x : k) x = u(rng);
    for (auto& x : v) x = u(rng);
    // q rows: [tok][head][d] with padding after each head and after each token.
    const int64_t q_tok = c.n_heads * vec + c.pad;
    q.resize(c.n_q * q_tok);
    for (auto& x : q) x = u(rng) * c.q_gain;
    out.assign(q.size(), 777.0f);  // sentinel: padding must stay untouched
    args.q = q.data();
    args.q_stride_tok = q_tok;
    args.q_stride_head = vec;
    if (c.f16) {
      for (const float x : k) k16.push_back(bosch::f32_to_f16(x));
      for (const float x : v) v16.push_back(bosch::f32_to_f16(x));
      args.k16 = k16.data();
      args.v16 = v16.data();
    } else {
      args.k = k.data();
      args.v = v.data();
    }
    if (c.head_major) {
      args.kv_stride_pos = vec;
      args.kv_stride_head = n_pos * vec;
    } else {
      args.kv_stride_pos = c.n_kv_heads * vec;
      args.kv_stride_head = vec;
    }
    args.out = out.data();
    args.o_stride_tok = q_tok;
    args.o_stride_head = vec;
    args.n_q = c.n_q;
    args.q_pos0 = c.q_pos0;
    args.n_heads = c.n_heads;
    args.n_kv_heads = c.n_kv_heads;
    args.head_dim = c.head_dim;
    args.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    args.window = c.window.data();
    args.sinks = c.sinks.data();
  }
  bool is_output(int64_t idx) const {
    const int64_t in_tok = idx % args.q_stride_tok;
    return in_tok < c.n_heads * args.q_stride_head && in_tok % args.q_stride_head < c.head_dim;
  }
};

std::vector<float> run_fast(const Case& c) {
  Tensors t(c);
  bosch::attention(t.args);
  return t.out;
}

// Runs fast and reference kernels; returns the max abs error (and fails on touched padding).
double max_error(const Case& c) {
  Tensors fast(c), ref(c);
  bosch::attention(fast.args);
  bosch::attention_reference(ref.args);
  double err = 0;
  for (size_t i = 0; i < fast.out.size(); ++i) {
    if (!fast.is_output(i)) {
      EXPECT_EQ(fast.out[i], 777.0f) << "padding written at " << i << " " << describe(c);
      continue;
    }
    if (!std::isfinite(fast.out[i])) return INFINITY;
    err = std::max(err, std::abs(static_cast<double>(fast.out[i]) - ref.out[i]));
  }
  return err;
}

Case make_case(int n_q, int64_t pos0, int n_heads, int n_kv, int hd, int w, int s) {
  Case c;
  c.n_q = n_q;
  c.q_pos0 = pos0;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv;
  c.head_dim = hd;
  c.window.assign(n_kv, w);
  c.sinks.assign(n_kv, s);
  return c;
}

// Random shapes; every fourth case hands K/V over as fp16 (the reference reads the same halves).
TEST(Attention, MatchesReferenceOnRandomShapes) {
  std::mt19937 rng(12345);
  auto pick = [&](std::initializer_list<int> xs) {
    std::vector<int> v(xs);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  for (int it = 0; it < 160; ++it) {
    const int len = pick({1, 2, 5, 17, 63, 64, 65, 100, 127, 128, 129, 191, 200, 257, 300});
    Case c;
    const int mode = pick({0, 1, 2});  // prefill, chunked prefill, decode
    if (mode == 0 || len == 1) {
      c.q_pos0 = 0;
      c.n_q = len;
    } else if (mode == 1) {
      c.q_pos0 = std::uniform_int_distribution<int>(1, len - 1)(rng);
      c.n_q = len - static_cast<int>(c.q_pos0);
    } else {
      c.q_pos0 = len - 1;
      c.n_q = 1;
    }
    c.n_kv_heads = pick({1, 2, 3});
    c.n_heads = c.n_kv_heads * pick({1, 2, 4});
    c.head_dim = pick({8, 16, 32, 64, 128, 5, 24, 40});
    for (int g = 0; g < c.n_kv_heads; ++g) {  // heads mixed full/SWA within one call
      c.window.push_back(pick({0, 1, 2, 7, 64, 65, len, len + 5}));
      c.sinks.push_back(pick({0, 1, 4, 100}));
    }
    c.head_major = pick({0, 1});
    c.pad = pick({0, 0, 3});
    c.q_gain = static_cast<float>(pick({1, 1, 8}));
    c.seed = it;
    c.f16 = it % 4 == 3;
    const double err = max_error(c);
    EXPECT_LT(err, 1e-4) << describe(c);
  }
}

TEST(Attention, BlockEdgesAllWindowsAndSinks) {
  for (int len : {63, 64, 65, 128, 129}) {
    for (int w : {1, 2, 7, 64, 65, len, len + 5}) {
      for (int s : {0, 1, 4, 100}) {
        Case c = make_case(len, 0, 4, 2, 16, w, s);
        c.window[1] = 0;  // second KV head full
        EXPECT_LT(max_error(c), 1e-4) << describe(c);
      }
    }
  }
}

TEST(Attention, ChunkedPrefillAndDecodeAtLargePositions) {
  for (int64_t pos0 : {64, 100, 1000, 3000}) {
    for (int n_q : {1, 3, 64, 70}) {
      Case c = make_case(n_q, pos0, 8, 4, 32, 64, 4);
      c.window = {0, 64, 1, 200};
      c.sinks = {0, 4, 0, 100};
      EXPECT_LT(max_error(c), 1e-4) << describe(c);
    }
  }
}

TEST(Attention, DecodeAndTinyChunksEveryHeadDim) {
  // Few rows take the row-major path for head_dim 16/32/64/128 and the lanes path otherwise.
  for (int hd : {8, 16, 24, 32, 64, 128}) {
    for (int n_q : {1, 2, 4, 5}) {
      for (int group : {1, 2, 4}) {
        // pos0 = 62: the tokens straddle a key block edge, so with W = 1 some rows see nothing
        // in a visited block (must not turn into NaN).
        for (int64_t pos0 : {200 - n_q, 62}) {
          Case c = make_case(n_q, pos0, 2 * group, 2, hd, 0, 0);
          c.window = {1, 50};
          c.sinks = {0, 3};
          c.q_gain = 4.0f;
          EXPECT_LT(max_error(c), 1e-4) << describe(c);
        }
      }
    }
  }
}

TEST(Attention, GqaGroupWiderThanOneItem) {
  // 80 query heads on one KV head: a group is split over two items of at most 64 rows.
  for (int n_q : {1, 3}) {
    Case c = make_case(n_q, 70, 80, 1, 16, 9, 2);
    EXPECT_LT(max_error(c), 1e-4) << describe(c);
    c.head_dim = 12;
    EXPECT_LT(max_error(c), 1e-4) << describe(c);
  }
}

TEST(Attention, PeakySoftmaxStaysAccurate) {
  for (int hd : {16, 64}) {
    Case c = make_case(150, 0, 2, 1, hd, 0, 0);
    c.q_gain = 40.0f;  // logits of order +-40*sqrt(hd): online rescaling must not overflow
    EXPECT_LT(max_error(c), 1e-4) << describe(c);
  }
}

TEST(Attention, WindowCoveringEverythingEqualsFull) {
  for (int n : {1, 50, 64, 130}) {
    const Case full = make_case(n, 0, 4, 2, 32, 0, 0);
    for (int w : {n, n + 5}) {
      for (int s : {0, 4}) {
        const Case swa = make_case(n, 0, 4, 2, 32, w, s);
        const auto a = run_fast(full), b = run_fast(swa);
        double d = 0;
        for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(double(a[i]) - b[i]));
        EXPECT_LE(d, 1e-6) << "n=" << n << " W=" << w << " S=" << s;
      }
    }
  }
}

TEST(Attention, SinksCoveringEverythingEqualsFull) {
  const int n = 90;
  const auto a = run_fast(make_case(n, 0, 2, 1, 16, 0, 0));
  const auto b = run_fast(make_case(n, 0, 2, 1, 16, 3, n));  // S >= n: every key is a sink
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-6);
}

TEST(Attention, WindowOfOneReturnsOwnValue) {
  Tensors t(make_case(70, 0, 2, 1, 8, 1, 0));
  bosch::attention(t.args);
  for (int i = 0; i < 70; ++i)
    for (int h = 0; h < 2; ++h)
      for (int d = 0; d < 8; ++d)
        ASSERT_NEAR(t.out[i * t.args.o_stride_tok + h * t.args.o_stride_head + d],
                    t.v[i * t.args.kv_stride_pos + d], 1e-6);
}

TEST(Attention, SwaVisitsFewerKeyBlocks) {
  // The benchmark's shape: n = 8192, 8 query / 4 KV heads; SWA W=512 S=4 against full.
  Case full = make_case(8192, 0, 8, 4, 64, 0, 0);
  Case swa = make_case(8192, 0, 8, 4, 64, 512, 4);
  Tensors tf(make_case(1, 0, 8, 4, 64, 0, 0));  // only for valid pointers; no data is read
  AttentionArgs af = tf.args, as = tf.args;
  af.n_q = as.n_q = 8192;
  af.window = full.window.data();
  af.sinks = full.sinks.data();
  as.window = swa.window.data();
  as.sinks = swa.sinks.data();
  const int64_t vf = bosch::attention_visited_blocks(af);
  const int64_t vs = bosch::attention_visited_blocks(as);
  const int kb = bosch::attention_key_block();
  // Full: token block b (32 tokens at GQA 2) needs key blocks 0 .. last, summed over 4 heads.
  int64_t expect_full = 0;
  for (int t0 = 0; t0 < 8192; t0 += 32) expect_full += 4 * ((t0 + 31) / kb + 1);
  EXPECT_EQ(vf, expect_full);
  // SWA: at most the sink block plus (W + 32) / 64 + 2 band blocks per token block.
  EXPECT_LE(vs, 4 * (8192 / 32) * (1 + (512 + 32) / kb + 2));
  EXPECT_LT(vs * 5, vf) << "SWA visited " << vs << " of " << vf << " key blocks";
  // A full head in the same call keeps its blocks.
  std::vector<int32_t> mixed_w{0, 512, 512, 512}, mixed_s{0, 4, 4, 4};
  AttentionArgs am = as;
  am.window = mixed_w.data();
  am.sinks = mixed_s.data();
  EXPECT_EQ(bosch::attention_visited_blocks(am), vf / 4 + vs * 3 / 4);
}

TEST(Attention, FlopsCountVisiblePairs) {
  Tensors t(make_case(10, 0, 4, 2, 8, 0, 0));
  EXPECT_DOUBLE_EQ(bosch::attention_flops(t.args), 55.0 * 4 * 4 * 8);  // 55 pairs per head
  std::vector<int32_t> w{3, 3}, s{1, 1};
  t.args.window = w.data();
  t.args.sinks = s.data();
  // positions 0..9: band min(p+1,3) = 1,2,3,3,...  (27) + a sink when p >= 3 (7) = 34.
  EXPECT_DOUBLE_EQ(bosch::attention_flops(t.args), 34.0 * 4 * 4 * 8);
}

TEST(Attention, SameResultWhateverTheThreadCount) {
  Case c = make_case(300, 0, 8, 2, 64, 0, 0);
  c.window = {0, 100};
  c.sinks = {0, 4};
  const int saved = bosch::num_threads();
  bosch::set_num_threads(1);
  const auto one = run_fast(c);
  bosch::set_num_threads(2);
  const auto two = run_fast(c);
  bosch::set_num_threads(3);
  const auto three = run_fast(c);
  bosch::set_num_threads(saved);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, three);
}

TEST(Attention, RejectsInconsistentShapes) {
  Tensors t(make_case(4, 0, 4, 2, 8, 0, 0));
  AttentionArgs a = t.args;
  a.n_heads = 3;
  EXPECT_THROW(bosch::attention(a), bosch::Error);
  a = t.args;
  std::vector<int32_t> bad{-1, 0};
  a.window = bad.data();
  EXPECT_THROW(bosch::attention(a), bosch::Error);
  a = t.args;
  a.k = nullptr;
  EXPECT_THROW(bosch::attention(a), bosch::Error);
}

TEST(Attention, NullWindowMeansFull) {
  Tensors a(make_case(40, 0, 2, 2, 16, 0, 0)), b(make_case(40, 0, 2, 2, 16, 0, 0));
  b.args.window = nullptr;
  b.args.sinks = nullptr;
  bosch::attention(a.args);
  bosch::attention(b.args);
  EXPECT_EQ(a.out, b.out);
}

}  // namespace

namespace {

TEST(Attention, Fp16KeysAndValuesOnBothPaths) {
  // Prefill (lanes path), decode and tiny chunks (row-major path) over fp16 K/V, with SWA heads
  // and block edges; and the fp16 data is really what is read: the result moves off float32's.
  for (int hd : {16, 64, 128, 40}) {
    for (auto [n_q, pos0] : {std::pair{70, 0}, std::pair{1, 300}, std::pair{3, 62}, std::pair{129, 100}}) {
      Case c = make_case(n_q, pos0, 4, 2, hd, 0, 0);
      c.window = {0, 50};
      c.sinks = {0, 3};
      c.f16 = true;
      EXPECT_LT(max_error(c), 1e-4) << describe(c);
      Case f32 = c;
      f32.f16 = false;
      const auto a = run_fast(c), b = run_fast(f32);
      double moved = 0;
      for (size_t i = 0; i < a.size(); ++i) moved = std::max(moved, static_cast<double>(std::fabs(a[i] - b[i])));
      EXPECT_GT(moved, 1e-6) << describe(c);
      EXPECT_LT(moved, 5e-3) << describe(c);  // halves keep ~3 decimal digits of values in [-1, 1]
    }
  }
  // Exactly one of the two K/V pairs.
  Case c = make_case(4, 0, 2, 1, 16, 0, 0);
  c.f16 = true;
  Tensors t(c);
  t.args.k = t.k.data();  // fp16 K/V given, and float32 K as well
  EXPECT_THROW(bosch::attention(t.args), bosch::Error);
  t.args.k = nullptr;
  t.args.v16 = nullptr;  // fp16 K without V
  EXPECT_THROW(bosch::attention(t.args), bosch::Error);
}

}  // namespace

