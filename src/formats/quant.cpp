#include "formats/quant.h"

#include <cstring>

#include "formats/dtype.h"

namespace bosch::quant {

namespace {

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

}  // namespace

void dequant_q4_0(const uint8_t* src, float* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b, src += kQ4_0Bytes, dst += kQK) {
    const float d = half_at(src);
    const uint8_t* qs = src + 2;
    // Low nibbles are elements 0..15, high nibbles 16..31; both offset by 8.
    for (size_t j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>((qs[j] & 0x0f) - 8) * d;
      dst[j + kQK / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
  }
}

void dequant_q5_0(const uint8_t* src, float* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b, src += kQ5_0Bytes, dst += kQK) {
    const float d = half_at(src);
    uint32_t qh;
    std::memcpy(&qh, src + 2, 4);  // bit j: the 5th bit of element j
    const uint8_t* qs = src + 6;
    for (size_t j = 0; j < kQK / 2; ++j) {
      const int hi0 = static_cast<int>((qh >> j) & 1) << 4;
      const int hi1 = static_cast<int>((qh >> (j + 16)) & 1) << 4;
      dst[j] = static_cast<float>(((qs[j] & 0x0f) | hi0) - 16) * d;
      dst[j + kQK / 2] = static_cast<float>(((qs[j] >> 4) | hi1) - 16) * d;
    }
  }
}

void dequant_q8_0(const uint8_t* src, float* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b, src += kQ8_0Bytes, dst += kQK) {
    const float d = half_at(src);
    const int8_t* q = reinterpret_cast<const int8_t*>(src + 2);
    for (size_t j = 0; j < kQK; ++j) dst[j] = d * static_cast<float>(q[j]);
  }
}

void dequant_q4_k(const uint8_t* src, float* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b, src += kQ4_KBytes) {
    const float d = half_at(src), dmin = half_at(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* qs = src + 16;
    // Four 64-element groups; each byte holds an element of sub-block 2g (low nibble) and of
    // sub-block 2g+1 (high nibble). y = (d*sc)*q - dmin*m, each product rounded on its own.
    for (int g = 0; g < 4; ++g, qs += 32) {
      uint8_t sc0, m0, sc1, m1;
      k_scale_min(2 * g, scales, &sc0, &m0);
      k_scale_min(2 * g + 1, scales, &sc1, &m1);
      const float d0 = d * sc0, mm0 = dmin * m0, d1 = d * sc1, mm1 = dmin * m1;
      for (int l = 0; l < 32; ++l) *dst++ = d0 * static_cast<float>(qs[l] & 0x0f) - mm0;
      for (int l = 0; l < 32; ++l) *dst++ = d1 * static_cast<float>(qs[l] >> 4) - mm1;
    }
  }
}

void dequant_q5_k(const uint8_t* src, float* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b, src += kQ5_KBytes) {
    const float d = half_at(src), dmin = half_at(src + 2);
    const uint8_t* scales = src + 4;
    const uint8_t* qh = src + 16;       // bit 2g / 2g+1 of qh[l]: 5th bit of the two sub-blocks
    const uint8_t* qs = src + 16 + 32;
    for (int g = 0; g < 4; ++g, qs += 32) {
      uint8_t sc0, m0, sc1, m1;
      k_scale_min(2 * g, scales, &sc0, &m0);
      k_scale_min(2 * g + 1, scales, &sc1, &m1);
      const float d0 = d * sc0, mm0 = dmin * m0, d1 = d * sc1, mm1 = dmin * m1;
      const uint8_t bit0 = static_cast<uint8_t>(1u << (2 * g)), bit1 = static_cast<uint8_t>(2u << (2 * g));
      for (int l = 0; l < 32; ++l)
        *dst++ = d0 * static_cast<float>((qs[l] & 0x0f) + ((qh[l] & bit0) ? 16 : 0)) - mm0;
      for (int l = 0; l < 32; ++l)
        *dst++ = d1 * static_cast<float>((qs[l] >> 4) + ((qh[l] & bit1) ? 16 : 0)) - mm1;
    }
  }
}

void dequant_q6_k(const uint8_t* src, float* dst, size_t nblocks) {
  for (size_t b = 0; b < nblocks; ++b, src += kQ6_KBytes) {
    const uint8_t* ql = src;
    const uint8_t* qh = src + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(src + 192);
    const float d = half_at(src + 208);
    // Two halves of 128 elements; in each, element l + 32i takes 4 low bits from ql (nibble
    // i/2 of byte l + 32(i%2)) and 2 high bits from qh[l] (bits 2i, 2i+1); offset 32.
    for (int h = 0; h < 2; ++h, ql += 64, qh += 32, sc += 8, dst += 128) {
      for (int l = 0; l < 32; ++l) {
        const int s = l / 16;
        const int q0 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q1 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        dst[l] = d * static_cast<float>(sc[s]) * static_cast<float>(q0);
        dst[l + 32] = d * static_cast<float>(sc[s + 2]) * static_cast<float>(q1);
        dst[l + 64] = d * static_cast<float>(sc[s + 4]) * static_cast<float>(q2);
        dst[l + 96] = d * static_cast<float>(sc[s + 6]) * static_cast<float>(q3);
      }
    }
  }
}

}  // namespace bosch::quant
