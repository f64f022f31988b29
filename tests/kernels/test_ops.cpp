// Dense ops against naive loops written straight from their definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/fast_exp.h"
#include "kernels/ops.h"

namespace {

std::vector<float> random_vec(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

TEST(Ops, MatmulMatchesNaiveOnOddShapes) {
  struct Shape { int m, n, k; };
  for (Shape s : {Shape{1, 1, 1}, {1, 7, 13}, {3, 5, 7}, {17, 33, 65}, {64, 1, 128}, {1, 300, 257},
                  {130, 70, 3}, {2, 129, 64}}) {
    const auto x = random_vec(size_t(s.m) * s.k, 1), w = random_vec(size_t(s.n) * s.k, 2);
    std::vector<float> y(size_t(s.m) * s.n), ref(y.size());
    bosch::matmul_nt(x.data(), w.data(), y.data(), s.m, s.n, s.k);
    // Naive loop here, independent of matmul_nt_reference.
    for (int i = 0; i < s.m; ++i)
      for (int j = 0; j < s.n; ++j) {
        double acc = 0;
        for (int t = 0; t < s.k; ++t) acc += double(x[size_t(i) * s.k + t]) * w[size_t(j) * s.k + t];
        ref[size_t(i) * s.n + j] = float(acc);
      }
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], ref[i], 1e-5 * std::sqrt(double(s.k)) + 1e-6) << s.m << "x" << s.n << "x" << s.k;
    std::vector<float> y2(y.size());
    bosch::matmul_nt_reference(x.data(), w.data(), y2.data(), s.m, s.n, s.k);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_FLOAT_EQ(y2[i], ref[i]);
    // accumulate adds onto y.
    std::vector<float> acc(y.size(), 0.5f);
    bosch::matmul_nt(x.data(), w.data(), acc.data(), s.m, s.n, s.k, true);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(acc[i], ref[i] + 0.5f, 1e-4);
  }
}

TEST(Ops, MatmulWithEmptyInnerDimensionIsZero) {
  std::vector<float> y(6, 3.0f);
  float dummy = 0;
  bosch::matmul_nt(&dummy, &dummy, y.data(), 2, 3, 0);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

TEST(Ops, RmsnormMatchesDefinition) {
  for (int dim : {1, 15, 16, 17, 100, 4096}) {
    const int rows = 3;
    const auto x = random_vec(size_t(rows) * dim, dim, -3, 3), w = random_vec(dim, dim + 1, 0.5, 1.5);
    std::vector<float> out(x.size());
    const float eps = 1e-5f;
    bosch::rmsnorm(x.data(), w.data(), out.data(), rows, dim, eps);
    for (int r = 0; r < rows; ++r) {
      double ss = 0;
      for (int i = 0; i < dim; ++i) ss += double(x[r * dim + i]) * x[r * dim + i];
      const double inv = 1.0 / std::sqrt(ss / dim + eps);
      for (int i = 0; i < dim; ++i)
        ASSERT_NEAR(out[r * dim + i], x[r * dim + i] * inv * w[i], 1e-5 * std::abs(x[r * dim + i] * inv * w[i]) + 1e-6);
    }
  }
  // In place works.
  auto x = random_vec(64, 9);
  const auto w = random_vec(64, 10);
  std::vector<float> out(64);
  bosch::rmsnorm(x.data(), w.data(), out.data(), 1, 64, 1e-6f);
  bosch::rmsnorm(x.data(), w.data(), x.data(), 1, 64, 1e-6f);
  EXPECT_EQ(x, out);
}

TEST(Ops, RopeMatchesDirectFormulaIncludingLongPositions) {
  const int hd = 64, half = hd / 2, n_heads = 3, n_tok = 4;
  const int64_t stride = n_heads * hd + 5;  // padded rows: the padding must not move
  std::vector<float> inv_freq(half);
  for (int i = 0; i < half; ++i) inv_freq[i] = float(std::pow(10000.0, -2.0 * i / hd));
  for (int64_t pos0 : {int64_t(0), int64_t(7), int64_t(30000), int64_t(32764)}) {
    const auto x0 = random_vec(size_t(n_tok) * stride, uint32_t(pos0) + 3);
    auto x = x0;
    bosch::rope_rotate_half(x.data(), n_tok, pos0, n_heads, hd, stride, inv_freq.data());
    for (int t = 0; t < n_tok; ++t) {
      for (int h = 0; h < n_heads; ++h) {
        const float* a = x0.data() + t * stride + h * hd;
        const float* b = x.data() + t * stride + h * hd;
        for (int i = 0; i < half; ++i) {
          // HF: q * cos + rotate_half(q) * sin, rotate_half(q) = cat(-q2, q1), angle in long double.
          const long double ang = static_cast<long double>(pos0 + t) * inv_freq[i];
          const long double c = std::cos(ang), s = std::sin(ang);
          ASSERT_NEAR(b[i], double(a[i] * c - a[i + half] * s), 2e-6) << "pos " << pos0 + t << " i " << i;
          ASSERT_NEAR(b[i + half], double(a[i + half] * c + a[i] * s), 2e-6) << "pos " << pos0 + t;
        }
      }
      for (int64_t p = n_heads * hd; p < stride; ++p) ASSERT_EQ(x[t * stride + p], x0[t * stride + p]);
    }
  }
}

TEST(Ops, RopeAtPositionZeroIsIdentity) {
  std::vector<float> inv_freq{1.0f, 0.1f, 0.01f, 0.001f};
  const auto x0 = random_vec(16, 4);
  auto x = x0;
  bosch::rope_rotate_half(x.data(), 2, 0, 1, 8, 8, inv_freq.data());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(x[i], x0[i]);
  EXPECT_NE(x[8], x0[8]);  // second token is at position 1 and rotates
}

TEST(Ops, SwigluMatchesDefinition) {
  auto g = random_vec(1000, 5, -20, 20), u = random_vec(1000, 6, -2, 2);
  g[0] = -200.0f;  // exp(200) overflows float: must still give ~0, not NaN
  g[1] = 200.0f;
  std::vector<float> out(g.size());
  bosch::swiglu(g.data(), u.data(), out.data(), int64_t(g.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double silu = double(g[i]) / (1.0 + std::exp(-double(g[i])));
    ASSERT_NEAR(out[i], silu * u[i], 1e-6 * std::abs(silu * u[i]) + 1e-7) << "g=" << g[i];
  }
}

TEST(Ops, SoftmaxAndLogSumExp) {
  for (int n : {1, 5, 16, 33, 32000}) {
    auto x = random_vec(n, n, -30, 30);
    if (n > 3) x[2] = -std::numeric_limits<float>::infinity();
    double mx = -INFINITY;
    for (float v : x) mx = std::max(mx, double(v));
    double sum = 0;
    for (float v : x) sum += std::exp(double(v) - mx);
    const double lse = mx + std::log(sum);
    EXPECT_NEAR(bosch::log_sum_exp(x.data(), n), lse, 1e-6);
    auto y = x;
    EXPECT_NEAR(bosch::softmax_inplace(y.data(), n), lse, 1e-6);
    double total = 0;
    for (int i = 0; i < n; ++i) {
      const double p = std::exp(double(x[i]) - lse);
      ASSERT_NEAR(y[i], p, 1e-6 * p + 1e-12);
      total += y[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
  std::vector<float> big{1000.0f, 999.0f};  // no overflow
  EXPECT_NEAR(bosch::log_sum_exp(big.data(), 2), 1000.0 + std::log1p(std::exp(-1.0)), 1e-4);
}

TEST(Ops, FastExpIsAccurate) {
  double worst = 0;
  for (double x = -87.0; x <= 88.0; x += 0.001) {
    const double ref = std::exp(double(float(x)));
    worst = std::max(worst, std::abs(bosch::kernels::fast_exp(float(x)) - ref) / ref);
  }
  EXPECT_LT(worst, 4e-7);
  EXPECT_EQ(bosch::kernels::fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(bosch::kernels::fast_exp(-100.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(bosch::kernels::fast_exp(1000.0f)));
  // The vector version agrees with the scalar one lane by lane.
  bosch::kernels::vf16 v;
  for (int l = 0; l < 16; ++l) v[l] = -80.0f + 10.3f * l;
  const auto e = bosch::kernels::fast_exp(v);
  for (int l = 0; l < 16; ++l) EXPECT_EQ(e[l], bosch::kernels::fast_exp(v[l]));
}

}  // namespace
