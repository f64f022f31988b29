// Whole blocks dequantised to float32 (the prefill tiles and get_row of qmatmul.cpp), compiled
// once per instruction set: included only by isa_kernels.h (kernels/dispatch.h). Each type
// equals the scalar dequant_blocks (formats/quant.cpp, bit-exact with ggml) bit for bit: the
// same products in the same order, each rounded on its own. Quants are unpacked in registers,
// 16 at a time widened to int32, converted and scaled: one zmm register in the AVX-512 build,
// two ymm in the AVX2 build. Without AVX2 (the fuzz build) the scalar code runs.
#pragma once
#include "formats/dtype.h"
#include "kernels/qdot_kernels.h"  // half_at, the block layouts

namespace bosch::kernels {
inline namespace BOSCH_ISA {

#if BOSCH_QDOT_AVX2

// GCC fuses a*b - c into one FMA (-ffp-contract=fast) where ggml rounds the product first; an
// empty asm hides the product from the compiler, so the subtraction stays a subtraction. (The
// K-quant products are exact, 11 x 6 x 5 significant bits, so only NaN propagation could differ;
// the scalar reference's two operations are kept rather than relying on that.)
template <class V>
inline V unfused(V v) {
  asm("" : "+v"(v));
  return v;
}

// dst[0..16) = q * scale (- sub), q the 16 bytes of b as signed or unsigned integers.
template <bool Signed, bool Sub>
inline void put16(float* dst, __m128i b, float scale, float sub = 0) {
#if defined(__AVX512F__)
  // (maskz with all lanes: the plain forms make GCC 12 warn about their undefined source)
  const __m512i i = Signed ? _mm512_maskz_cvtepi8_epi32(0xffff, b) : _mm512_maskz_cvtepu8_epi32(0xffff, b);
  __m512 y = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xffff, i), _mm512_set1_ps(scale));
  if (Sub) y = _mm512_sub_ps(unfused(y), _mm512_set1_ps(sub));
  _mm512_storeu_ps(dst, y);
#else
  const __m128i b1 = _mm_unpackhi_epi64(b, b);
  const __m256i i0 = Signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
  const __m256i i1 = Signed ? _mm256_cvtepi8_epi32(b1) : _mm256_cvtepu8_epi32(b1);
  const __m256 s = _mm256_set1_ps(scale);
  __m256 y0 = _mm256_mul_ps(_mm256_cvtepi32_ps(i0), s), y1 = _mm256_mul_ps(_mm256_cvtepi32_ps(i1), s);
  if (Sub) {
    const __m256 m = _mm256_set1_ps(sub);
    y0 = _mm256_sub_ps(unfused(y0), m);
    y1 = _mm256_sub_ps(unfused(y1), m);
  }
  _mm256_storeu_ps(dst, y0);
  _mm256_storeu_ps(dst + 8, y1);
#endif
}
// The two 16-byte halves of v: elements 0-15 and 16-31.
template <bool Signed, bool Sub>
inline void put32(float* dst, __m256i v, float scale, float sub = 0) {
  put16<Signed, Sub>(dst, _mm256_castsi256_si128(v), scale, sub);
  put16<Signed, Sub>(dst + 16, _mm256_extracti128_si256(v, 1), scale, sub);
}

inline __m128i load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m256i load32u(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

inline void dequant_q8_0_simd(const uint8_t* p, float* y, size_t nb) {
  for (size_t b = 0; b < nb; ++b, p += kQ8_0Bytes, y += kQK) {
    const float d = half_at(p);
    put16<true, false>(y, load16(p + 2), d);
    put16<true, false>(y + 16, load16(p + 18), d);
  }
}

// Q4_0 / Q5_0: low nibbles are elements 0-15, high nibbles 16-31 (Q5_0: bit j of qh on top).
inline void dequant_q4_0_simd(const uint8_t* p, float* y, size_t nb) {
  const __m128i m = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
  for (size_t b = 0; b < nb; ++b, p += kQ4_0Bytes, y += kQK) {
    const float d = half_at(p);
    const __m128i v = load16(p + 2);
    put16<true, false>(y, _mm_sub_epi8(_mm_and_si128(v, m), eight), d);
    put16<true, false>(y + 16, _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), m), eight), d);
  }
}

inline void dequant_q5_0_simd(const uint8_t* p, float* y, size_t nb) {
  // Byte j gets byte j/8 of qh, then 0x10 where its bit j%8 is set: the 5th bit of element j.
  const __m256i spread = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  const __m128i m = _mm_set1_epi8(0x0f), sixteen = _mm_set1_epi8(16);
  for (size_t b = 0; b < nb; ++b, p += kQ5_0Bytes, y += kQK) {
    const float d = half_at(p);
    uint32_t qh;
    std::memcpy(&qh, p + 2, 4);
    __m256i h = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), spread);
    h = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(h, bit), bit), _mm256_set1_epi8(0x10));
    const __m128i v = load16(p + 6);
    const __m128i lo = _mm_or_si128(_mm_and_si128(v, m), _mm256_castsi256_si128(h));
    const __m128i hi = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(v, 4), m), _mm256_extracti128_si256(h, 1));
    put16<true, false>(y, _mm_sub_epi8(lo, sixteen), d);
    put16<true, false>(y + 16, _mm_sub_epi8(hi, sixteen), d);
  }
}

// Q4_K / Q5_K: four 64-element groups; group g's bytes hold sub-block 2g (low nibbles) and 2g+1
// (high nibbles); Q5_K adds bit 2g / 2g+1 of qh[l] as bit 4. y = (d*sc)*q - dmin*m.
template <bool Five>
inline void dequant_q45_k_simd(const uint8_t* p, float* y, size_t nb) {
  const __m256i m = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  for (size_t b = 0; b < nb; ++b, p += Five ? kQ5_KBytes : kQ4_KBytes) {
    const float d = half_at(p), dmin = half_at(p + 2);
    const uint8_t* qs = p + (Five ? 48 : 16);
    const __m256i h = Five ? load32u(p + 16) : _mm256_setzero_si256();
    for (int g = 0; g < 4; ++g, qs += 32, y += 64) {
      uint8_t sc0, m0, sc1, m1;
      k_scale_min(2 * g, p + 4, &sc0, &m0);
      k_scale_min(2 * g + 1, p + 4, &sc1, &m1);
      const __m256i v = load32u(qs);
      __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
      if (Five) {
        const __m128i c0 = _mm_cvtsi32_si128(2 * g), c1 = _mm_cvtsi32_si128(2 * g + 1);
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(h, c0), one), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(h, c1), one), 4));
      }
      put32<false, true>(y, lo, d * sc0, dmin * m0);
      put32<false, true>(y + 32, hi, d * sc1, dmin * m1);
    }
  }
}

// Q6_K: two halves of 128; element l + 32i of a half takes nibble i/2 of ql[l + 32(i%2)] and
// bits 2i, 2i+1 of qh[l], minus 32; its scale is sc[l/16 + 2i]. y = (d*sc)*q.
inline void dequant_q6_k_simd(const uint8_t* p, float* y, size_t nb) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(3), off = _mm256_set1_epi8(32);
  for (size_t b = 0; b < nb; ++b, p += kQ6_KBytes) {
    const float d = half_at(p + 208);
    const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
    for (int half = 0; half < 2; ++half, sc += 8, y += 128) {
      const __m256i a = load32u(p + 64 * half), c = load32u(p + 64 * half + 32), h = load32u(p + 128 + 32 * half);
      const auto high = [&](int s) { return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, s), m2), 4); };
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(a, m4), high(0)),
          _mm256_or_si256(_mm256_and_si256(c, m4), high(2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4), high(4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(c, 4), m4), high(6)),
      };
      for (int i = 0; i < 4; ++i) {
        const __m256i s = _mm256_sub_epi8(q[i], off);
        put16<true, false>(y + 32 * i, _mm256_castsi256_si128(s), d * static_cast<float>(sc[2 * i]));
        put16<true, false>(y + 32 * i + 16, _mm256_extracti128_si256(s, 1), d * static_cast<float>(sc[2 * i + 1]));
      }
    }
  }
}

// BF16 is the high half of a float32; F16 takes the F16C conversion like dequant_blocks does
// (the same 8-element steps, then the same scalar tail). Both run at the scalar code's speed
// (which the compiler vectorises); here so that every stored type has one fast path.
inline void dequant_bf16_simd(const uint8_t* p, float* y, size_t n) {
  size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_maskz_cvtepu16_epi32(0xffff, load32u(p + 2 * i));
    _mm512_storeu_si512(y + i, _mm512_maskz_slli_epi32(0xffff, w, 16));
  }
#endif
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(load16(p + 2 * i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_slli_epi32(w, 16));
  }
  if (i < n) dequant_blocks(DType::BF16, p + 2 * i, y + i, n - i);
}
inline void dequant_f16_simd(const uint8_t* p, float* y, size_t n) {
  size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_maskz_cvtph_ps(0xffff, load32u(p + 2 * i)));
#endif
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(load16(p + 2 * i)));
  if (i < n) dequant_blocks(DType::F16, p + 2 * i, y + i, n - i);
}

#endif  // BOSCH_QDOT_AVX2

// nblocks whole blocks (elements for F32/F16/BF16) of type t from p into y: dequant_blocks' values.
inline void dequant_kernel(DType t, const uint8_t* p, float* y, size_t nblocks) {
#if BOSCH_QDOT_AVX2
  switch (t) {
    case DType::Q8_0: return dequant_q8_0_simd(p, y, nblocks);
    case DType::Q4_0: return dequant_q4_0_simd(p, y, nblocks);
    case DType::Q5_0: return dequant_q5_0_simd(p, y, nblocks);
    case DType::Q4_K: return dequant_q45_k_simd<false>(p, y, nblocks);
    case DType::Q5_K: return dequant_q45_k_simd<true>(p, y, nblocks);
    case DType::Q6_K: return dequant_q6_k_simd(p, y, nblocks);
    case DType::BF16: return dequant_bf16_simd(p, y, nblocks);
    case DType::F16: return dequant_f16_simd(p, y, nblocks);
    default: break;  // F32 (a copy) and the error for an unknown type
  }
#endif
  dequant_blocks(t, p, y, nblocks);
}

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
