#include "formats/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "formats/writers.h"
#include "util/error.h"

using namespace bosch;

namespace {

float bits_f(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t f_bits(float f) { return std::bit_cast<uint32_t>(f); }

// Naive reference: the half (non-negative, finite) nearest to |x|, ties to the even bit pattern,
// overflow to inf beyond 65520 (the midpoint between the largest half and 2^16).
uint16_t naive_f32_to_f16(float x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return sign | 0x7c00;
  uint16_t best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    double err = std::fabs(static_cast<double>(f16_to_f32(static_cast<uint16_t>(h))) - a);
    if (err < best_err || (err == best_err && (h & 1) == 0)) {
      best = static_cast<uint16_t>(h);
      best_err = err;
    }
  }
  return sign | best;
}

}  // namespace

TEST(DType, F16KnownBitPatterns) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));          // smallest normal
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));          // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x03ff), std::ldexp(1023.0f, -24));       // largest subnormal
  EXPECT_EQ(f16_to_f32(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f_bits(f16_to_f32(0x8000)), 0x80000000u);            // -0 keeps its sign
  EXPECT_EQ(f16_to_f32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16_to_f32(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7c01)));  // signalling nan stays nan

  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // tie between 65504 (odd) and 2^16 -> inf
  EXPECT_EQ(f32_to_f16(1e9f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e9f), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);            // tie -> even (zero)
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0001f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);            // 1.5 ulp tie -> even 2
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(f32_to_f16(std::ldexp(2047.0f, -25)), 0x0400);         // rounds up into normals
  EXPECT_EQ(f32_to_f16(bits_f(0x3f801000)), 0x3c00);               // 1 + 2^-11: tie -> even
  EXPECT_EQ(f32_to_f16(bits_f(0x3f803000)), 0x3c02);               // 1 + 3*2^-11: tie -> even
  uint16_t n = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(n & 0x7c00, 0x7c00);
  EXPECT_NE(n & 0x3ff, 0);
  EXPECT_NE(f32_to_f16(bits_f(0x7f800001)) & 0x3ff, 0);  // nan payload below f16 precision
}

TEST(DType, F16RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << h;
    } else {
      ASSERT_EQ(f32_to_f16(f), h) << "half 0x" << std::hex << h;
    }
  }
}

TEST(DType, F16RoundingMatchesNaiveNearest) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exp_dist(-27.0f, 16.5f);
  for (int k = 0; k < 1500; ++k) {
    float x = std::exp2(exp_dist(rng)) * ((rng() & 1) ? 1.0f : -1.0f);
    ASSERT_EQ(f32_to_f16(x), naive_f32_to_f16(x)) << "x=" << x;
  }
  // Exact midpoints between neighbouring halves (normal and subnormal) exercise the ties.
  for (uint32_t h = 1; h < 0x7bff; h += 97) {
    double mid = (static_cast<double>(f16_to_f32(h)) + f16_to_f32(h + 1)) / 2;
    float x = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(x), mid);
    ASSERT_EQ(f32_to_f16(x), naive_f32_to_f16(x)) << "midpoint after half " << h;
    ASSERT_EQ(f32_to_f16(x) & 1, 0);
  }
}

TEST(DType, BF16KnownBitPatterns) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc040), -3.0f);
  EXPECT_EQ(bf16_to_f32(0x7f80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(bf16_to_f32(0x0001), bits_f(0x00010000));  // subnormal
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7fc0)));

  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(bits_f(0x3f808000)), 0x3f80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16(bits_f(0x3f818000)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16(bits_f(0x3f808001)), 0x3f81);  // above the tie
  EXPECT_EQ(f32_to_bf16(bits_f(0x3f807fff)), 0x3f80);  // below the tie
  EXPECT_EQ(f32_to_bf16(bits_f(0xbf818000)), 0xbf82);  // sign does not change the rounding
  EXPECT_EQ(f32_to_bf16(bits_f(0x7f7fffff)), 0x7f80);  // largest float rounds to inf
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(bits_f(0x00018000)), 0x0002);  // subnormal tie, odd rounds up
  uint16_t n = f32_to_bf16(bits_f(0x7f800001));        // nan whose payload is in the low bits
  EXPECT_TRUE(std::isnan(bf16_to_f32(n)));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(-std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = bf16_to_f32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(f32_to_bf16(f), h);
    }
  }
}

TEST(DType, BytesAndBlocks) {
  EXPECT_EQ(dtype_bytes(DType::F32, 10), 40u);
  EXPECT_EQ(dtype_bytes(DType::F16, 10), 20u);
  EXPECT_EQ(dtype_bytes(DType::BF16, 10), 20u);
  EXPECT_EQ(dtype_bytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(dtype_block(DType::Q8_0), 32u);
  EXPECT_EQ(dtype_block(DType::F16), 1u);
  EXPECT_THROW(dtype_bytes(DType::Q8_0, 33), Error);
  EXPECT_EQ(dtype_name(DType::BF16), "BF16");
  EXPECT_EQ(dtype_name(DType::Q8_0), "Q8_0");
}

TEST(DType, Q8_0DecodesHandMadeBlock) {
  // d = 0.5 (half 0x3800), q = -128, -1, 0, 1, ..., values = d * q.
  std::vector<uint8_t> block(34);
  block[0] = 0x00;
  block[1] = 0x38;
  int8_t q[32];
  for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(j == 0 ? -128 : j - 2);
  std::memcpy(block.data() + 2, q, 32);
  std::vector<float> out(32);
  to_f32(DType::Q8_0, block.data(), out.data(), 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], 0.5f * q[j]) << j;
}

TEST(DType, Q8_0EncodeDecodeWithinErrorBound) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  const size_t n = 32 * 200;
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng);
  for (size_t j = 0; j < 32; ++j) x[32 + j] = 0.0f;  // an all-zero block decodes to zeros
  std::vector<uint8_t> enc = encode_f32(DType::Q8_0, x.data(), n);
  ASSERT_EQ(enc.size(), dtype_bytes(DType::Q8_0, n));
  std::vector<float> y(n);
  to_f32(DType::Q8_0, enc.data(), y.data(), n);
  for (size_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    float d = amax / 127;
    uint16_t dh;
    std::memcpy(&dh, enc.data() + b * 34, 2);
    float dq = f16_to_f32(dh);
    // Rounding q costs d/2; storing d in fp16 costs |dq - d| per unit of q (|q| <= 127).
    float bound = d / 2 + 127 * std::fabs(dq - d) + 1e-6f;
    for (size_t j = 0; j < 32; ++j) {
      ASSERT_LE(std::fabs(x[b * 32 + j] - y[b * 32 + j]), bound) << "block " << b << " elem " << j;
    }
  }
  for (size_t j = 0; j < 32; ++j) EXPECT_EQ(y[32 + j], 0.0f);
  // Integers in [-127, 127] with a max of 127 are represented exactly (d = 1).
  std::vector<float> ints(32);
  for (int j = 0; j < 32; ++j) ints[j] = static_cast<float>(j * 8 - 127);
  ints[31] = 127;
  auto e2 = encode_f32(DType::Q8_0, ints.data(), 32);
  std::vector<float> back(32);
  to_f32(DType::Q8_0, e2.data(), back.data(), 32);
  EXPECT_EQ(back, ints);
}

TEST(DType, ParallelConversionMatchesScalar) {
  const size_t n = 300000;  // above the parallel grain
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> u(0, 0xffff);
  std::vector<uint16_t> h(n);
  for (auto& v : h) v = static_cast<uint16_t>(u(rng));
  std::vector<float> out(n);
  to_f32(DType::F16, h.data(), out.data(), n);
  for (size_t i = 0; i < n; ++i) {
    float ref = f16_to_f32(h[i]);
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(out[i]));
    } else {
      ASSERT_EQ(out[i], ref) << i;
    }
  }
  to_f32(DType::BF16, h.data(), out.data(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(f_bits(out[i]), static_cast<uint32_t>(h[i]) << 16) << i;
  }
  std::vector<float> f(n);
  for (auto& v : f) v = static_cast<float>(u(rng)) - 30000.0f;
  std::vector<float> g(n);
  to_f32(DType::F32, f.data(), g.data(), n);
  EXPECT_EQ(f, g);
}

TEST(DType, EncodeF32RoundTripsHalfTypes) {
  std::vector<float> x = {1.0f, -2.5f, 0.1f, 65504.0f, 1e-7f, -0.0f};
  auto e16 = encode_f32(DType::F16, x.data(), x.size());
  auto eb = encode_f32(DType::BF16, x.data(), x.size());
  ASSERT_EQ(e16.size(), 12u);
  std::vector<float> y(x.size());
  to_f32(DType::F16, e16.data(), y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], f16_to_f32(f32_to_f16(x[i])));
  to_f32(DType::BF16, eb.data(), y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], bf16_to_f32(f32_to_bf16(x[i])));
  EXPECT_EQ(y[0], 1.0f);
}
