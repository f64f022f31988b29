#include "formats/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats/dtype.h"
#include "formats/quant.h"

namespace bosch::quant {

namespace {

// Stores an fp16 scale and returns the value the reader will see.
float put_half(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
  return f16_to_f32(h);
}

int clamp_round(float v, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lround(v)), lo, hi);
}

// Symmetric blocks of 32 (value = d * q): d from the largest magnitude so that |q| <= qmax.
void quantize_symmetric(const float* x, uint8_t* p, int qmax, bool q8) {
  float amax = 0;
  for (size_t j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = put_half(p, amax / static_cast<float>(qmax));
  const float id = d > 0 ? 1.0f / d : 0.0f;
  for (size_t j = 0; j < kQK; ++j) {
    const int q = clamp_round(x[j] * id, -qmax, qmax);
    if (q8) {
      p[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
    } else if (j < kQK / 2) {  // low nibbles: elements 0..15, high nibbles: 16..31 (offset 8)
      p[2 + j] = static_cast<uint8_t>(q + 8);
    } else {
      p[2 + j - kQK / 2] = static_cast<uint8_t>(p[2 + j - kQK / 2] | ((q + 8) << 4));
    }
  }
}

// Q4_K / Q5_K: value = (d * sc_j) * q - dmin * m_j over 8 sub-blocks of 32, q in [0, qmax],
// sc and m 6-bit. The offset m_j covers the sub-block's minimum (<= 0) to within dmin / 2, and
// the step is rounded up (not to nearest) so that qmax steps cover the whole sub-block.
void quantize_k_affine(const float* x, uint8_t* p, int qmax, uint8_t* q) {
  float lo[8], hi[8];
  float max_min = 0;
  for (int j = 0; j < 8; ++j) {
    lo[j] = 0.0f;
    hi[j] = 0.0f;
    for (int l = 0; l < 32; ++l) {
      lo[j] = std::min(lo[j], x[32 * j + l]);
      hi[j] = std::max(hi[j], x[32 * j + l]);
    }
    max_min = std::max(max_min, -lo[j]);
  }
  const float dmin = put_half(p + 2, max_min / 62.5f);  // headroom: m stays <= 63 after fp16 rounding
  int m[8];
  float step_need[8], max_step = 0;
  for (int j = 0; j < 8; ++j) {
    m[j] = dmin > 0 ? clamp_round(-lo[j] / dmin, 0, 63) : 0;
    const float offset = dmin * static_cast<float>(m[j]);
    // The largest distance of a value above -offset decides the step.
    step_need[j] = std::max(0.0f, hi[j] + offset) / static_cast<float>(qmax);
    max_step = std::max(max_step, step_need[j]);
  }
  const float d = put_half(p, max_step / 62.5f);
  uint8_t* s = p + 4;
  std::memset(s, 0, 12);
  for (int j = 0; j < 8; ++j) {
    const int sc = d > 0 ? std::clamp(static_cast<int>(std::ceil(step_need[j] / d)), 0, 63) : 0;
    if (j < 4) {  // the inverse of k_scale_min (quant.h)
      s[j] = static_cast<uint8_t>(sc);
      s[j + 4] = static_cast<uint8_t>(m[j]);
    } else {
      s[j + 4] = static_cast<uint8_t>((sc & 0x0f) | ((m[j] & 0x0f) << 4));
      s[j - 4] = static_cast<uint8_t>(s[j - 4] | ((sc >> 4) << 6));
      s[j] = static_cast<uint8_t>(s[j] | ((m[j] >> 4) << 6));
    }
    // Quantise against the values the reader computes: d*sc and dmin*m, each rounded to float.
    const float step = d * static_cast<float>(sc), offset = dmin * static_cast<float>(m[j]);
    const float inv = step > 0 ? 1.0f / step : 0.0f;
    for (int l = 0; l < 32; ++l) q[32 * j + l] = static_cast<uint8_t>(clamp_round((x[32 * j + l] + offset) * inv, 0, qmax));
  }
}

}  // namespace

void quantize_q4_0(const float* src, uint8_t* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) quantize_symmetric(src + b * kQK, dst + b * kQ4_0Bytes, 7, false);
}

void quantize_q8_0(const float* src, uint8_t* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b) quantize_symmetric(src + b * kQK, dst + b * kQ8_0Bytes, 127, true);
}

void quantize_q4_k(const float* src, uint8_t* dst, size_t nblocks) {
  uint8_t q[kQK_K];
  for (size_t b = 0; b < nblocks; ++b, src += kQK_K, dst += kQ4_KBytes) {
    quantize_k_affine(src, dst, 15, q);
    uint8_t* qs = dst + 16;  // group g: low nibble = sub-block 2g, high nibble = 2g+1
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 32; ++l) qs[32 * g + l] = static_cast<uint8_t>(q[64 * g + l] | (q[64 * g + 32 + l] << 4));
  }
}

void quantize_q5_k(const float* src, uint8_t* dst, size_t nblocks) {
  uint8_t q[kQK_K];
  for (size_t b = 0; b < nblocks; ++b, src += kQK_K, dst += kQ5_KBytes) {
    quantize_k_affine(src, dst, 31, q);
    uint8_t* qh = dst + 16;  // bit 2g / 2g+1 of qh[l]: the 5th bit of sub-block 2g / 2g+1
    uint8_t* qs = dst + 48;
    std::memset(qh, 0, 32);
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 32; ++l) {
        const int a = q[64 * g + l], c = q[64 * g + 32 + l];
        qs[32 * g + l] = static_cast<uint8_t>((a & 0x0f) | ((c & 0x0f) << 4));
        qh[l] = static_cast<uint8_t>(qh[l] | ((a >> 4) << (2 * g)) | ((c >> 4) << (2 * g + 1)));
      }
  }
}

// Q6_K: value = d * sc_j * q over 16 sub-blocks of 16, q in [-32, 31], sc_j int8. We use
// |q| <= 31 (symmetric) and round each sub-block's step up to a multiple of d.
void quantize_q6_k(const float* src, uint8_t* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b, src += kQK_K, dst += kQ6_KBytes) {
    float need[16], max_need = 0;
    for (int j = 0; j < 16; ++j) {
      float amax = 0;
      for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(src[16 * j + l]));
      need[j] = amax / 31.0f;
      max_need = std::max(max_need, need[j]);
    }
    const float d = put_half(dst + 208, max_need / 126.5f);
    int8_t* sc = reinterpret_cast<int8_t*>(dst + 192);
    uint8_t q[kQK_K];
    for (int j = 0; j < 16; ++j) {
      const int s = d > 0 ? std::clamp(static_cast<int>(std::ceil(need[j] / d)), 0, 127) : 0;
      sc[j] = static_cast<int8_t>(s);
      const float step = d * static_cast<float>(s);
      const float inv = step > 0 ? 1.0f / step : 0.0f;
      for (int l = 0; l < 16; ++l) q[16 * j + l] = static_cast<uint8_t>(clamp_round(src[16 * j + l] * inv, -31, 31) + 32);
    }
    uint8_t* ql = dst;
    uint8_t* qh = dst + 128;
    for (int h = 0; h < 2; ++h)  // the inverse of dequant_q6_k's layout (quant.cpp)
      for (int l = 0; l < 32; ++l) {
        const int q0 = q[128 * h + l], q1 = q[128 * h + l + 32], q2 = q[128 * h + l + 64], q3 = q[128 * h + l + 96];
        ql[64 * h + l] = static_cast<uint8_t>((q0 & 0x0f) | ((q2 & 0x0f) << 4));
        ql[64 * h + l + 32] = static_cast<uint8_t>((q1 & 0x0f) | ((q3 & 0x0f) << 4));
        qh[32 * h + l] = static_cast<uint8_t>((q0 >> 4) | ((q1 >> 4) << 2) | ((q2 >> 4) << 4) | ((q3 >> 4) << 6));
      }
  }
}

}  // namespace bosch::quant
