// Our quantisers (formats/quantize.h) against the dequantisation that is bit-exact with ggml
// (formats/quant.h): quantise -> dequantise stays within each element's bound (half a step of
// its block, plus half a min step for Q4_K/Q5_K) and within a per-type RMS error, on Gaussian
// blocks, blocks of one sign, constant and all-zero blocks, and blocks with an outlier.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formats/dtype.h"
#include "formats/quant.h"
#include "formats/writers.h"
#include "util/error.h"

using namespace bosch;

namespace {

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

std::vector<float> test_values(size_t n) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 0.02f);
  std::vector<float> v(n);
  for (float& x : v) x = nd(rng);
  // Blocks of 256 with special content: all positive, all negative, constant, zero, outlier.
  for (size_t i = 0; i < 256; ++i) {
    v[256 + i] = std::fabs(v[256 + i]) + 0.01f;
    v[512 + i] = -std::fabs(v[512 + i]);
    v[768 + i] = 0.5f;
    v[1024 + i] = 0.0f;
  }
  v[1280 + 7] = 3.0f;
  v[1536 + 100] = -1e-3f * 2.0f;
  return v;
}

// The largest error element i of a block may have, read from the block's own scales.
double bound(DType t, const uint8_t* blk, size_t i) {
  using namespace quant;
  switch (t) {
    case DType::Q8_0:
    case DType::Q4_0: return 0.5 * half_at(blk);
    case DType::Q4_K:
    case DType::Q5_K: {
      uint8_t sc, m;
      k_scale_min(static_cast<int>(i / 32), blk + 4, &sc, &m);
      return 0.5 * half_at(blk) * sc + 0.5 * half_at(blk + 2);
    }
    case DType::Q6_K: return 0.5 * half_at(blk + 208) * static_cast<int8_t>(blk[192 + i / 16]);
    default: return 0;
  }
}

struct Want {
  DType type;
  double rms;  // RMS error / RMS value on the Gaussian blocks
};

}  // namespace

TEST(Quantize, RoundTripWithinEachElementsBoundForEveryType) {
  const size_t n = 256 * 40;
  const auto x = test_values(n);
  for (Want w : {Want{DType::Q8_0, 0.01}, Want{DType::Q6_K, 0.03}, Want{DType::Q5_K, 0.06},
                 Want{DType::Q4_K, 0.12}, Want{DType::Q4_0, 0.15}}) {
    SCOPED_TRACE(dtype_name(w.type));
    const std::vector<uint8_t> q = encode_f32(w.type, x.data(), n);
    ASSERT_EQ(q.size(), dtype_bytes(w.type, n));
    std::vector<float> y(n);
    const size_t B = dtype_block(w.type), bb = dtype_block_bytes(w.type);
    dequant_blocks(w.type, q.data(), y.data(), n / B);
    double err2 = 0, val2 = 0;
    for (size_t i = 0; i < n; ++i) {
      const double e = std::fabs(static_cast<double>(y[i]) - x[i]);
      const double b = bound(w.type, q.data() + (i / B) * bb, i % B);
      ASSERT_LE(e, b * (1 + 1e-5) + 1e-7 * std::fabs(x[i]) + 1e-9) << "element " << i << " x=" << x[i] << " y=" << y[i];
      if (i >= 2048) {
        err2 += e * e;
        val2 += static_cast<double>(x[i]) * x[i];
      }
    }
    const double rel = std::sqrt(err2 / val2);
    std::printf("%s: RMS error / RMS value %.4f\n", dtype_name(w.type).c_str(), rel);
    EXPECT_LT(rel, w.rms);
    for (size_t i = 1024; i < 1280; ++i) EXPECT_EQ(y[i], 0.0f) << "a zero block stays zero";
  }
}

TEST(Quantize, PartialBlocksAreRefused) {
  std::vector<float> x(300, 1.0f);
  EXPECT_THROW(encode_f32(DType::Q4_K, x.data(), x.size()), Error);
  EXPECT_THROW(encode_f32(DType::Q4_0, x.data(), 33), Error);
}
