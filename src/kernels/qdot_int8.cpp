#include "kernels/qdot_int8.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "formats/quant.h"
#include "kernels/dispatch.h"
#include "util/error.h"

namespace bosch {

using namespace quant;

int q8_block(DType t) {
  switch (t) {
    case DType::Q8_0: case DType::Q4_0: case DType::Q5_0: return static_cast<int>(kQK);
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: return static_cast<int>(kQK_K);
    default: return 0;
  }
}

void quantize_row_q8(const float* x, int64_t k, int block, int8_t* q, float* d, int16_t* sum16) {
  for (int64_t b = 0; b < k / block; ++b, x += block, q += block) {
    float amax = 0;
    bool finite = true;
    for (int i = 0; i < block; ++i) {
      const float a = std::fabs(x[i]);
      amax = a > amax ? a : amax;
      finite &= a <= std::numeric_limits<float>::max();  // false for Inf and NaN
    }
    if (!finite) {
      d[b] = NAN;
      std::memset(q, 0, static_cast<size_t>(block));
      continue;
    }
    d[b] = amax / 127;
    // ggml's block_q8_0 keeps x's scale in fp16: rounded the same way, decode on Q8_0/Q4_0/Q5_0
    // weights gives llama.cpp's logits (its Q8_K scale, for the K-quants, is a float like ours).
    if (block == 32 && d[b] < 65504) d[b] = f16_to_f32(f32_to_f16(d[b]));
    if (!(d[b] > 0)) {  // all zero, or a scale d cannot hold (below fp16's range, or flushed to 0
      std::memset(q, 0, static_cast<size_t>(block));  // as subnormal): the block reads as 0 either way
      continue;
    }
    // |x / d| <= 127 up to rounding: the clamp keeps -128 out (Q8_0's sign trick needs that).
    auto put = [&](int i, float v) {
      v = std::nearbyint(v);
      q[i] = static_cast<int8_t>(v > 127 ? 127 : v < -127 ? -127 : v);
    };
    const float id = 127 / amax;
    if (id <= std::numeric_limits<float>::max())
      for (int i = 0; i < block; ++i) put(i, x[i] * id);
    else  // max below 3.7e-37: 127 / max overflows (reached only when subnormals are kept)
      for (int i = 0; i < block; ++i) put(i, x[i] / (amax / 127));
  }
  q -= k;
  for (int64_t j = 0; j < k / 16; ++j) {
    int s = 0;
    for (int i = 0; i < 16; ++i) s += q[16 * j + i];
    sum16[j] = static_cast<int16_t>(s);
  }
}

Q8Row Q8Buffer::quantize(const float* x, int64_t k, int block) {
  check(block > 0 && k % block == 0, "quantize_row_q8: {} elements are not whole blocks of {}", k, block);
  const auto n = static_cast<size_t>(k), nb = n / static_cast<size_t>(block);
  if (q_.size() < n) q_.resize(n);
  if (sum16_.size() < n / 16) sum16_.resize(n / 16);
  if (d_.size() < nb) d_.resize(nb);
  quantize_row_q8(x, k, block, q_.data(), d_.data(), sum16_.data());
  Q8Row r{q_.data(), d_.data(), sum16_.data(), k, block};
  if (block == static_cast<int>(kQK_K)) {
    if (qk_.size() < n) qk_.resize(n), sum32_.resize(n / 32);
    for (size_t j = 0; j < n / 32; ++j) {
      sum32_[j] = static_cast<int16_t>(sum16_[2 * j] + sum16_[2 * j + 1]);  // |sum| <= 32 * 127
      static constexpr size_t kAt[4] = {0, 2, 1, 3};  // sub-block j's place within its 128
      std::memcpy(&qk_[j / 4 * 128 + kAt[j % 4] * 32], &q_[32 * j], 32);
    }
    r.sum32 = sum32_.data();
    r.qk = qk_.data();
  }
  return r;
}

float dot_row_q8(DType t, const void* row, const Q8Row& x) {
  if (x.block != q8_block(t) || x.block == 0)  // not check(): its message arguments cost per row
    fail("dot_row_q8: {} weights need x in blocks of {}, got {}", dtype_name(t), q8_block(t), x.block);
  return kernels::active_kernels().dot_row_q8(t, static_cast<const uint8_t*>(row), x);  // qdot_int8_kernels.h
}

namespace {

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// The integer quants of one block in element order, as quant.cpp's dequantisation reads them:
// Q8_0/Q4_0/Q5_0 signed (offsets 8 and 16 removed); Q4_K/Q5_K/Q6_K unsigned (Q6_K's offset 32
// is applied by the caller, per sub-block, like the kernels do).
void unpack_ints(DType t, const uint8_t* p, int* q) {
  switch (t) {
    case DType::Q8_0:
      for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(p[2 + i]);
      break;
    case DType::Q4_0:
      for (int j = 0; j < 16; ++j) q[j] = (p[2 + j] & 15) - 8, q[j + 16] = (p[2 + j] >> 4) - 8;
      break;
    case DType::Q5_0: {
      uint32_t qh;
      std::memcpy(&qh, p + 2, 4);
      for (int j = 0; j < 16; ++j) {
        q[j] = ((p[6 + j] & 15) | static_cast<int>((qh >> j) & 1) << 4) - 16;
        q[j + 16] = ((p[6 + j] >> 4) | static_cast<int>((qh >> (j + 16)) & 1) << 4) - 16;
      }
      break;
    }
    case DType::Q4_K: case DType::Q5_K: {
      const bool five = t == DType::Q5_K;
      const uint8_t* qh = p + 16;
      const uint8_t* qs = p + (five ? 48 : 16);
      for (int g = 0; g < 4; ++g)
        for (int l = 0; l < 32; ++l) {
          q[64 * g + l] = (qs[32 * g + l] & 15) + (five && (qh[l] >> (2 * g) & 1) ? 16 : 0);
          q[64 * g + 32 + l] = (qs[32 * g + l] >> 4) + (five && (qh[l] >> (2 * g + 1) & 1) ? 16 : 0);
        }
      break;
    }
    case DType::Q6_K:
      for (int h = 0; h < 2; ++h) {
        const uint8_t* ql = p + 64 * h;
        const uint8_t* qh = p + 128 + 32 * h;
        for (int l = 0; l < 32; ++l) {
          q[128 * h + l] = (ql[l] & 15) | (qh[l] & 3) << 4;
          q[128 * h + l + 32] = (ql[l + 32] & 15) | (qh[l] >> 2 & 3) << 4;
          q[128 * h + l + 64] = (ql[l] >> 4) | (qh[l] >> 4 & 3) << 4;
          q[128 * h + l + 96] = (ql[l + 32] >> 4) | (qh[l] >> 6 & 3) << 4;
        }
      }
      break;
    default:
      fail("dot_row_q8: {} is not a block type", dtype_name(t));
  }
}

}  // namespace

double dot_row_q8_reference(DType t, const void* row, const Q8Row& x, double* magnitude) {
  check(x.block == q8_block(t) && x.block > 0, "dot_row_q8_reference: {} weights need x in blocks of {}, got {}",
        dtype_name(t), q8_block(t), x.block);
  const auto* p = static_cast<const uint8_t*>(row);
  const size_t bytes = dtype_block_bytes(t);
  double sum = 0, mag = 0;
  int q[256];
  for (int64_t b = 0; b < x.k / x.block; ++b, p += bytes) {
    const int8_t* y = x.q + b * x.block;
    unpack_ints(t, p, q);
    if (x.block == 32) {  // one scale pair per block: (d_w d_x) * sum q y
      int64_t dot = 0, abs_dot = 0;
      for (int i = 0; i < 32; ++i) dot += q[i] * y[i], abs_dot += std::abs(q[i] * y[i]);
      const float s = half_at(p) * x.d[b];
      sum += static_cast<double>(s) * static_cast<double>(dot);
      mag += std::fabs(s) * static_cast<double>(abs_dot);
    } else if (t == DType::Q6_K) {  // d_w d_x * sum_j sc_j (sum q y - 32 sum y), 16 sub-blocks of 16
      const auto* sc = reinterpret_cast<const int8_t*>(p + 192);
      const float s = half_at(p + 208) * x.d[b];
      int64_t dot = 0, abs_dot = 0;
      for (int j = 0; j < 16; ++j) {
        int64_t qy = 0, ys = 0, aqy = 0, ay = 0;
        for (int i = 16 * j; i < 16 * j + 16; ++i) qy += q[i] * y[i], ys += y[i], aqy += std::abs(q[i] * y[i]), ay += std::abs(y[i]);
        dot += sc[j] * (qy - 32 * ys);
        abs_dot += std::abs(sc[j]) * (aqy + 32 * ay);
      }
      sum += static_cast<double>(s) * static_cast<double>(dot);
      mag += std::fabs(s) * static_cast<double>(abs_dot);
    } else {  // Q4_K/Q5_K: d_w d_x * sum_j sc_j sum q y - dmin_w d_x * sum_j m_j sum y, 8 sub-blocks of 32
      const float s = half_at(p) * x.d[b], smin = half_at(p + 2) * x.d[b];
      int64_t dot = 0, mins = 0, abs_dot = 0, abs_mins = 0;
      for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        k_scale_min(j, p + 4, &sc, &m);
        int64_t qy = 0, ys = 0, aqy = 0, ay = 0;
        for (int i = 32 * j; i < 32 * j + 32; ++i) qy += q[i] * y[i], ys += y[i], aqy += std::abs(q[i] * y[i]), ay += std::abs(y[i]);
        dot += sc * qy, mins += m * ys, abs_dot += sc * aqy, abs_mins += m * ay;
      }
      sum += static_cast<double>(s) * static_cast<double>(dot) - static_cast<double>(smin) * static_cast<double>(mins);
      mag += std::fabs(s) * static_cast<double>(abs_dot) + std::fabs(smin) * static_cast<double>(abs_mins);
    }
  }
  if (magnitude) *magnitude = mag;
  return sum;
}

}  // namespace bosch
