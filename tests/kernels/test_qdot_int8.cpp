// The integer decode kernels (kernels/qdot_int8.h). x's 8-bit quantisation; each instruction
// set's SIMD kernel against the plain C++ integer reference: exactly equal where every float
// step is exact (power-of-two scales, x on the integer grid), within the float rounding of the
// block sums on random and extreme blocks (-128/127 quants, sub-block scales 63 / -128, zero and
// fp16-max scales, x all zero); and the integer path against the exact dot product on the
// dequantised weights, within the bound x's rounding allows. Each set this CPU lacks skips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "formats/dtype.h"
#include "kernels/dispatch.h"
#include "kernels/qdot.h"
#include "kernels/qdot_int8.h"

using namespace bosch;

namespace {

const DType kTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};
constexpr double kU = 1.0 / (1 << 24);  // float32 unit roundoff

void put_half(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// k elements of type t: random quant bytes; with `extremes` some blocks have every byte (quants,
// 5th/high bits, 6-bit and int8 sub-block scales) 0xff, 0x80, 0x7f or 0; fp16 scales from scale().
std::vector<uint8_t> make_row(DType t, int64_t k, std::mt19937& rng, bool extremes, const std::function<float()>& scale) {
  std::vector<uint8_t> row(dtype_bytes(t, static_cast<size_t>(k)));
  for (uint8_t& b : row) b = static_cast<uint8_t>(rng());
  const size_t bb = dtype_block_bytes(t);
  for (size_t off = 0; off < row.size(); off += bb) {
    const uint32_t pattern = rng() % 6;
    if (extremes && pattern < 4) std::memset(&row[off], "\xff\x80\x7f\x00"[pattern], bb);
    put_half(&row[off + (t == DType::Q6_K ? 208 : 0)], scale());
    if (t == DType::Q4_K || t == DType::Q5_K) put_half(&row[off + 2], scale());
  }
  return row;
}

// x on the integer grid: per block integers in [-r, r] and one +-127, times 2^e, so its
// quantisation is exact (d = 2^e, q = x / d).
std::vector<float> grid_x(int64_t k, int block, int r, int e, std::mt19937& rng) {
  std::vector<float> x(static_cast<size_t>(k));
  for (float& v : x) v = std::ldexp(static_cast<float>(static_cast<int>(rng() % (2 * r + 1)) - r), e);
  for (int64_t b = 0; b < k; b += block) x[b + rng() % block] = std::ldexp(rng() % 2 ? 127.0f : -127.0f, e);
  return x;
}

// Activations with uneven blocks: uniform, all zero, +-big alternating, one outlier, subnormal.
std::vector<float> wild_x(int64_t k, int block, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<size_t>(k));
  for (int64_t b = 0; b < k; b += block) {
    const uint32_t kind = rng() % 6;
    for (int64_t i = b; i < b + block; ++i) {
      const float r = u(rng);
      x[i] = kind == 1 ? 0.0f : kind == 2 ? ((i & 1) ? 1e3f : -1e3f) : kind == 3 ? 1e-3f * r : kind == 4 ? 1e-40f * r : r;
    }
    if (kind == 3) x[b + rng() % block] = 50.0f;
  }
  return x;
}

// How far x[i] can be from d q[i]: half a step of the unrounded scale d0 = max / 127, plus 127
// times the scale's fp16 rounding (blocks of 32), plus the float rounding of x / d0.
std::vector<double> x_error(const std::vector<float>& x, const Q8Row& q) {
  std::vector<double> e(x.size());
  for (size_t b = 0; b < x.size(); b += q.block) {
    float amax = 0;
    for (size_t i = b; i < b + q.block; ++i) amax = std::max(amax, std::fabs(x[i]));
    const double d0 = amax / 127.0, d = q.d[b / q.block];
    for (size_t i = b; i < b + q.block; ++i) e[i] = d0 / 2 + 127 * std::fabs(d0 - d) + 4 * kU * amax;
  }
  return e;
}

class Int8Dot : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const kernels::KernelSet* s : kernels::compiled_kernel_sets())
      if (GetParam() == s->name) set_ = s;
    ASSERT_NE(set_, nullptr);
    if (!kernels::cpu_runs(*set_)) GTEST_SKIP() << "this CPU lacks " << set_->name << " (" << set_->features << ")";
  }
  double dot(DType t, const std::vector<uint8_t>& row, const Q8Row& x) const {
    return set_->dot_row_q8(t, row.data(), x);
  }
  const kernels::KernelSet* set_ = nullptr;
};

}  // namespace

TEST(QuantizeRowQ8, NearestStepPerBlockMaxTo127AndSums) {
  std::mt19937 rng(1);
  for (int block : {32, 256}) {
    SCOPED_TRACE(block);
    const int64_t k = 2048;
    const auto x = wild_x(k, block, rng);
    Q8Buffer buf;
    const Q8Row q = buf.quantize(x.data(), k, block);
    const auto err = x_error(x, q);
    for (int64_t b = 0; b < k / block; ++b) {
      float amax = 0;
      int qmax = 0;
      for (int64_t i = b * block; i < (b + 1) * block; ++i) {
        ASSERT_LE(std::abs(q.q[i]), 127);
        ASSERT_LE(std::fabs(x[i] - static_cast<double>(q.d[b]) * q.q[i]), err[i]) << i;
        amax = std::max(amax, std::fabs(x[i]));
        qmax = std::max(qmax, std::abs(static_cast<int>(q.q[i])));
      }
      EXPECT_EQ(q.d[b], block == 32 ? f16_to_f32(f32_to_f16(amax / 127)) : amax / 127);
      EXPECT_EQ(qmax, amax > 0 ? 127 : 0);
    }
    for (int64_t j = 0; j < k / 16; ++j) {
      int s = 0;
      for (int i = 0; i < 16; ++i) s += q.q[16 * j + i];
      ASSERT_EQ(q.sum16[j], s) << j;
    }
  }
}

TEST(QuantizeRowQ8, NanOrInfBlockGivesNanDots) {
  std::vector<float> x(64, 0.5f);
  x[40] = INFINITY;
  Q8Buffer buf;
  const Q8Row q = buf.quantize(x.data(), 64, 32);
  EXPECT_EQ(q.d[0], f16_to_f32(f32_to_f16(0.5f / 127)));
  EXPECT_TRUE(std::isnan(q.d[1]));
  for (int i = 32; i < 64; ++i) ASSERT_EQ(q.q[i], 0);
  std::vector<uint8_t> row(dtype_bytes(DType::Q8_0, 64), 1);
  put_half(row.data(), 1.0f);
  put_half(row.data() + 34, 1.0f);
  EXPECT_TRUE(std::isnan(dot_row_q8(DType::Q8_0, row.data(), q)));
}

// Power-of-two scales (or zero) and x on the grid: every float step of kernel and reference is
// exact while the magnitude stays below 2^24 grid steps (asserted), so any difference would be
// a different integer sum.
TEST_P(Int8Dot, EqualsScalarReferenceExactlyOnTheGrid) {
  std::mt19937 rng(2);
  for (DType t : kTypes) {
    SCOPED_TRACE(dtype_name(t));
    const int block = q8_block(t);
    const int64_t k = block == 32 ? 512 : 256;
    const int e = -6, a = -8;  // x's and the weights' scale exponents
    for (int trial = 0; trial < 24; ++trial) {
      const auto row = make_row(t, k, rng, true, [&] { return rng() % 8 ? std::ldexp(1.0f, a) : 0.0f; });
      const auto x = grid_x(k, block, block == 32 ? 127 : 7, e, rng);
      Q8Buffer buf;
      const Q8Row xq = buf.quantize(x.data(), k, block);
      for (int64_t i = 0; i < k; ++i) ASSERT_EQ(std::ldexp(static_cast<float>(xq.q[i]), e), x[i]);
      double mag = 0;
      const double want = dot_row_q8_reference(t, row.data(), xq, &mag);
      ASSERT_LT(std::ldexp(mag, -(a + e)), 1 << 24) << "test setup: a float step of the kernel could round";
      EXPECT_EQ(dot(t, row, xq), want) << "trial " << trial;
    }
  }
}

// Any scales and x: the kernels sum the same integers in another order. Rounding bound: one
// rounding per int-to-float conversion and per FMA into an accumulator (nb of them at most) and
// a few for the horizontal sums, each <= kU * magnitude; twice that.
TEST_P(Int8Dot, MatchesScalarReferenceOnRandomAndExtremeBlocks) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  auto scale = [&] {
    const uint32_t r = rng() % 6;
    return r == 0 ? 0.0f : r == 1 ? 65504.0f : r == 2 ? -65504.0f : r == 3 ? 6e-8f : 0.05f * u(rng);
  };
  for (DType t : kTypes) {
    SCOPED_TRACE(dtype_name(t));
    const int block = q8_block(t);
    const int64_t k = 4096, nb = k / block;
    Q8Buffer buf;
    for (int trial = 0; trial < 6; ++trial) {
      const auto row = make_row(t, k, rng, trial % 2 == 0, scale);
      const auto x = wild_x(k, block, rng);
      const Q8Row xq = buf.quantize(x.data(), k, block);
      double mag = 0;
      const double want = dot_row_q8_reference(t, row.data(), xq, &mag);
      EXPECT_NEAR(dot(t, row, xq), want, 2 * (nb + 8) * kU * mag) << "trial " << trial;
    }
    const std::vector<float> zero(static_cast<size_t>(k), 0.0f);
    const Q8Row zq = buf.quantize(zero.data(), k, block);
    EXPECT_EQ(dot(t, make_row(t, k, rng, true, scale), zq), 0.0);
  }
}

// Against the exact dot on the dequantised weights (dot_row_reference, double): x[i] moved by at
// most x_error[i] (half a step, plus the fp16 rounding of a block-of-32 scale), so |error| <=
// sum |w[i]| x_error[i], plus the kernel's float rounding (as above) and the 1-ulp difference
// between ggml's rounded d*sc and the kernel's exact integer scales (1e-6 of sum |w x|).
TEST_P(Int8Dot, WithinTheActivationRoundingOfTheExactDot) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1, 1);
  for (DType t : kTypes) {
    SCOPED_TRACE(dtype_name(t));
    const int block = q8_block(t);
    const int64_t k = 2048, nb = k / block;
    Q8Buffer buf;
    double worst = 0;
    for (int trial = 0; trial < 8; ++trial) {
      const auto row = make_row(t, k, rng, trial % 2 == 1, [&] { return 0.05f * u(rng); });
      auto x = wild_x(k, block, rng);
      if (trial < 4)
        for (float& v : x) v = u(rng);
      const Q8Row xq = buf.quantize(x.data(), k, block);
      std::vector<float> w(static_cast<size_t>(k));
      dequant_blocks(t, row.data(), w.data(), static_cast<size_t>(k) / dtype_block(t));
      const auto xe = x_error(x, xq);
      double bound = 0, abs_wx = 0, mag = 0;
      for (int64_t i = 0; i < k; ++i) {
        bound += std::fabs(w[i]) * xe[i];
        abs_wx += std::fabs(static_cast<double>(w[i]) * x[i]);
      }
      dot_row_q8_reference(t, row.data(), xq, &mag);
      bound += 2 * (nb + 8) * kU * mag + 1e-6 * abs_wx + 1e-30;
      const double err = std::fabs(dot(t, row, xq) - dot_row_reference(t, row.data(), x.data(), k));
      EXPECT_LE(err, bound) << "trial " << trial;
      worst = std::max(worst, err / bound);
    }
    std::printf("%s %s: largest error / bound %.3f\n", GetParam().c_str(), dtype_name(t).c_str(), worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, Int8Dot, ::testing::Values("avx2", "avx512"),
                         [](const auto& info) { return info.param; });
