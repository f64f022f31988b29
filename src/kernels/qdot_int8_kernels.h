// The integer decode dot kernels (qdot_int8.h) on packed blocks, compiled once per instruction
// set: included only by isa_kernels.h. Weight quants and x's int8 quants are multiplied with
// maddubs (unsigned x signed bytes, adjacent pairs summed into int16) and madd (pairs of int16
// into int32, times 1 or times the sub-block scales). The AVX-512 build takes a whole 64-element
// group of a K-quant per register (half the instructions); blocks of 32 stay 256-bit in both.
// (VNNI's dpbusd would fuse maddubs + madd, but x86-64-v4 lacks it and the kernels are near the
// memory speed without it.) Without AVX2 (the fuzz build) the scalar reference runs.
#pragma once
#include "kernels/qdot_int8.h"
#include "kernels/qdot_kernels.h"

namespace bosch::kernels {
inline namespace BOSCH_ISA {

#if BOSCH_QDOT_AVX2

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// 8 int32 lanes, each the sum of 4 adjacent products a[i] * b[i], a unsigned, b signed. maddubs
// saturates its int16 pair sums; here |a| <= 128 and |b| <= 127, so 2 * 128 * 127 stays below.
inline __m256i dot4_u8s8(__m256i a, __m256i b) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1));
}
// Signed a: |a| times b with a's sign moved onto b (b is never -128, so negating it is safe).
inline __m256i dot4_s8s8(__m256i a, __m256i b) { return dot4_u8s8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a)); }

// The 32 signed quants of one block, in element order (low nibbles are elements 0-15).
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(15));
}
inline __m256i quants_q8_0(const uint8_t* b) { return load32(b + 2); }
inline __m256i quants_q4_0(const uint8_t* b) { return _mm256_sub_epi8(nibbles32(b + 2), _mm256_set1_epi8(8)); }
inline __m256i quants_q5_0(const uint8_t* b) {
  uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  // Byte j gets byte j/8 of qh, then 0xff where its bit j%8 is set: bit j of qh, per element.
  const __m256i spread = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  __m256i h = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), spread);
  h = _mm256_cmpeq_epi8(_mm256_and_si256(h, bit), bit);
  // (nibble | 16 * bit) - 16: the nibble where the bit is set, else nibble - 16 = nibble | 0xf0.
  return _mm256_or_si256(nibbles32(b + 6), _mm256_andnot_si256(h, _mm256_set1_epi8(static_cast<char>(0xf0))));
}

// Q8_0, Q4_0, Q5_0: per block (d_w d_x) * sum q y. Two accumulators, by name (an array indexed
// by the block number would live on the stack), so consecutive FMAs do not wait on each other.
template <__m256i (*Quants)(const uint8_t*)>
inline __m256 block32(const uint8_t* p, const Q8Row& x, int64_t b, __m256 acc) {
  const __m256i s = dot4_s8s8(Quants(p), load32(x.q + 32 * b));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(half_at(p) * x.d[b]), acc);
}
template <__m256i (*Quants)(const uint8_t*)>
inline float dot_blocks32(const uint8_t* p, size_t bytes, const Q8Row& x) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  const int64_t nb = x.k / 32;
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2, p += 2 * bytes) {
    prefetch_ahead(p);  // 68 bytes per step: about one line
    a0 = block32<Quants>(p, x, b, a0);
    a1 = block32<Quants>(p + bytes, x, b + 1, a1);
  }
  if (b < nb) a0 = block32<Quants>(p, x, b, a0);
  return hsum8(_mm256_add_ps(a0, a1));
}

// The int16 pattern that makes pshufb copy int16 j (bytes 2j, 2j+1) over its 128-bit lane.
inline constexpr int16_t pick16(int j) { return static_cast<int16_t>(0x0100 + 0x0202 * j); }
// v holds the same 8 int16 in both 128-bit halves: int16 j_lo copied over the low half, j_hi
// over the high half.
inline __m256i lanes16(__m256i v, int j_lo, int j_hi) {
  return _mm256_shuffle_epi8(v, _mm256_set_m128i(_mm_set1_epi16(pick16(j_hi)), _mm_set1_epi16(pick16(j_lo))));
}
#if defined(__AVX512BW__)
// The same over four 128-bit quarters.
inline __m512i lanes16(__m512i v, int j0, int j1, int j2, int j3) {
  auto w = [](int j) { return static_cast<long long>(0x0001000100010001ull * static_cast<uint16_t>(pick16(j))); };
  return _mm512_shuffle_epi8(v, _mm512_set_epi64(w(j3), w(j3), w(j2), w(j2), w(j1), w(j1), w(j0), w(j0)));
}
// Broadcasts and halves by shuffles of GCC vectors: GCC 12's _mm512_broadcast_* and extract
// intrinsics warn -Wmaybe-uninitialized once inlined (its bug 105593).
using v4i64 = long long __attribute__((vector_size(32)));
using v8i64 = long long __attribute__((vector_size(64)));
inline __m512i twice256(__m256i v) {
  const auto a = reinterpret_cast<v4i64>(v);
  return reinterpret_cast<__m512i>(__builtin_shufflevector(a, a, 0, 1, 2, 3, 0, 1, 2, 3));
}
inline __m512i four128(__m128i v) { return twice256(_mm256_broadcastsi128_si256(v)); }
inline __m256i add_halves(__m512i v) {
  const auto a = reinterpret_cast<v8i64>(v);
  return _mm256_add_epi32(reinterpret_cast<__m256i>(__builtin_shufflevector(a, a, 0, 1, 2, 3)),
                          reinterpret_cast<__m256i>(__builtin_shufflevector(a, a, 4, 5, 6, 7)));
}
#endif

// Q4_K, Q5_K: per super-block d_w d_x * sum_j sc_j (q . y)_j - dmin_w d_x * sum_j m_j (sum y)_j
// over the 8 sub-blocks of 32; sum_j sc_j (q . y)_j is exact in int32 lanes (< 2^26). qs: 4 x 32
// bytes, sub-block 2g in the low nibbles of bytes 32g.., 2g+1 in the high; qh (Q5_K): bits 2g and
// 2g+1 of byte l are the 5th bits of element l of those two sub-blocks.
template <bool Five>
inline __m256i q4k_q5k_sums(const uint8_t* qs, const uint8_t* qh, const int8_t* y, __m128i scales8) {
  const __m256i scales = _mm256_broadcastsi128_si256(scales8);
  const __m256i low4 = _mm256_set1_epi8(15), bit4 = _mm256_set1_epi8(16);
  __m256i h = Five ? load32(qh) : _mm256_setzero_si256();
  __m256i sum = _mm256_setzero_si256();
  for (int g = 0; g < 4; ++g) {
    const __m256i v = load32(qs + 32 * g);
    __m256i lo = _mm256_and_si256(v, low4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
    if (Five) {  // bits 0 and 1 of each byte to bit 4, then the next pair down
      lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(h, 4), bit4));
      hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(h, 3), bit4));
      h = _mm256_srli_epi16(h, 2);
    }
    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load32(y + 64 * g)), lanes16(scales, 2 * g, 2 * g)));
    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load32(y + 64 * g + 32)), lanes16(scales, 2 * g + 1, 2 * g + 1)));
  }
  return sum;
}

// The eight 6-bit scales and mins of a Q4_K/Q5_K super-block (quant.h k_scale_min), four bytes
// per 32-bit word: scales 0-3 in *sc_lo, 4-7 in *sc_hi, the mins likewise.
inline void k4_scales_mins(const uint8_t* p, uint32_t* sc_lo, uint32_t* sc_hi, uint32_t* m_lo, uint32_t* m_hi) {
  uint32_t a[3];
  std::memcpy(a, p + 4, 12);
  *sc_lo = a[0] & 0x3f3f3f3f, *sc_hi = (a[2] & 0x0f0f0f0f) | (a[0] >> 2 & 0x30303030);
  *m_lo = a[1] & 0x3f3f3f3f, *m_hi = (a[2] >> 4 & 0x0f0f0f0f) | (a[1] >> 2 & 0x30303030);
}
inline __m128i u8x8_to_i16(uint32_t lo, uint32_t hi) {
  return _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, static_cast<int>(hi), static_cast<int>(lo)));
}
// acc + the min term of super-block b, dmin_w d_x * m_j (sum y)_j for the 8 sub-blocks (the
// 32-sums come precomputed: Q8Row::sum32), in 4 lanes; and the final sum of those lanes.
inline __m128 k4_mins(const uint8_t* p, const Q8Row& x, int64_t b, uint32_t m_lo, uint32_t m_hi, __m128 acc) {
  const __m128i s32 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.sum32 + 8 * b));
  return _mm_fmadd_ps(_mm_cvtepi32_ps(_mm_madd_epi16(s32, u8x8_to_i16(m_lo, m_hi))), _mm_set1_ps(half_at(p + 2) * x.d[b]), acc);
}
inline float hsum4(__m128 m) {
  m = _mm_add_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_add_ss(m, _mm_movehdup_ps(m)));
}

#if defined(__AVX512BW__)
using v16si = int __attribute__((vector_size(64)));
// int32 to float lanes (_mm512_cvtepi32_ps trips the same GCC 12 warning as the broadcasts above)
inline __m512 to_float(__m512i v) { return reinterpret_cast<__m512>(__builtin_convertvector(reinterpret_cast<v16si>(v), v16sf)); }

// AVX-512: one 64-byte load of quants holds sub-blocks 4h, 4h+2 in its low nibbles and 4h+1,
// 4h+3 in its high ones (h = 0, 1), so x is read in that order (Q8Row::qk) and each half of a
// super-block takes 3 instructions to unpack instead of 8; the 32-sums come precomputed
// (Q8Row::sum32), and the products stay 16 float lanes wide until the row's end.
template <bool Five>
inline float dot_q4k_q5k(const uint8_t* p, const Q8Row& x) {
  constexpr size_t bytes = Five ? kQ5_KBytes : kQ4_KBytes;
  const __m512i low4 = _mm512_set1_epi8(15), bit4 = _mm512_set1_epi8(16);
  __m512 acc = _mm512_setzero_ps();
  __m128 acc_min = _mm_setzero_ps();
  for (int64_t b = 0; b < x.k / 256; ++b, p += bytes) {
    prefetch_ahead(p), prefetch_ahead(p + 64), prefetch_ahead(p + 128);  // 144 (Q5_K: 176) bytes
    uint32_t sc_lo, sc_hi, m_lo, m_hi;
    k4_scales_mins(p, &sc_lo, &sc_hi, &m_lo, &m_hi);
    const __m512i scales = four128(u8x8_to_i16(sc_lo, sc_hi));
    const uint8_t* qs = p + (Five ? 48 : 16);
    const int8_t* y = x.qk + 256 * b;
    __m512i hb = Five ? twice256(load32(p + 16)) : _mm512_setzero_si512();  // qh in both halves
    __m512i sum = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h, qs += 64, y += 128) {
      const __m512i v = _mm512_loadu_si512(qs);
      __m512i lo = _mm512_and_si512(v, low4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
      if (Five) {  // the 5th bit of sub-block j is bit j of qh: bits 4h | 4h+2 (lo), 4h+1 | 4h+3 (hi)
        lo = _mm512_or_si512(lo, _mm512_and_si512(_mm512_mask_blend_epi64(0xf0, _mm512_slli_epi16(hb, 4), _mm512_slli_epi16(hb, 2)), bit4));
        hi = _mm512_or_si512(hi, _mm512_and_si512(_mm512_mask_blend_epi64(0xf0, _mm512_slli_epi16(hb, 3), _mm512_slli_epi16(hb, 1)), bit4));
        hb = _mm512_srli_epi16(hb, 4);
      }
      const int j = 4 * h;
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(lo, _mm512_loadu_si512(y)), lanes16(scales, j, j, j + 2, j + 2)));
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(hi, _mm512_loadu_si512(y + 64)), lanes16(scales, j + 1, j + 1, j + 3, j + 3)));
    }
    acc = _mm512_fmadd_ps(to_float(sum), _mm512_set1_ps(half_at(p) * x.d[b]), acc);
    acc_min = k4_mins(p, x, b, m_lo, m_hi, acc_min);
  }
  return hsum16(acc) - hsum4(acc_min);
}
#else
template <bool Five>
inline float dot_q4k_q5k(const uint8_t* p, const Q8Row& x) {
  constexpr size_t bytes = Five ? kQ5_KBytes : kQ4_KBytes;
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_min = _mm_setzero_ps();
  for (int64_t b = 0; b < x.k / 256; ++b, p += bytes) {
    prefetch_ahead(p), prefetch_ahead(p + 64), prefetch_ahead(p + 128);
    uint32_t sc_lo, sc_hi, m_lo, m_hi;
    k4_scales_mins(p, &sc_lo, &sc_hi, &m_lo, &m_hi);
    const __m256i sum = q4k_q5k_sums<Five>(p + (Five ? 48 : 16), p + 16, x.q + 256 * b, u8x8_to_i16(sc_lo, sc_hi));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(half_at(p) * x.d[b]), acc);
    acc_min = k4_mins(p, x, b, m_lo, m_hi, acc_min);
  }
  return hsum8(acc) - hsum4(acc_min);
}
#endif

// Q6_K: per super-block d_w d_x * sum_j sc_j ((q . y)_j - 32 (sum y)_j) over 16 sub-blocks of 16,
// q unsigned 0..63; exact in int32 lanes (< 2^26). Each half of 128 elements: element l + 32i
// takes nibble i/2 of ql[l + 32(i%2)] and bits 2i, 2i+1 of qh[l] (quant.cpp dequant_q6_k).
inline __m256i q6k_sums(const uint8_t* ql, const uint8_t* qh, const int8_t* sc, const int8_t* y) {
#if defined(__AVX512BW__)
  const __m512i low4 = _mm512_set1_epi8(15), two = _mm512_set1_epi8(0x30);
  __m512i sum = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h, ql += 64, qh += 32, sc += 8, y += 128) {
    const __m512i scales = four128(_mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
    const __m512i l = _mm512_loadu_si512(ql), hb = twice256(load32(qh));
    // elements 0..63 (ql's low nibbles, qh bits 0-1 | 2-3) and 64..127 (high nibbles, bits 4-5 | 6-7)
    const __m512i q01 = _mm512_or_si512(_mm512_and_si512(l, low4),
        _mm512_and_si512(_mm512_mask_blend_epi64(0xf0, _mm512_slli_epi16(hb, 4), _mm512_slli_epi16(hb, 2)), two));
    const __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), low4),
        _mm512_and_si512(_mm512_mask_blend_epi64(0xf0, hb, _mm512_srli_epi16(hb, 2)), two));
    sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(q01, _mm512_loadu_si512(y)), lanes16(scales, 0, 1, 2, 3)));
    sum = _mm512_add_epi32(sum, _mm512_madd_epi16(_mm512_maddubs_epi16(q23, _mm512_loadu_si512(y + 64)), lanes16(scales, 4, 5, 6, 7)));
  }
  return add_halves(sum);
#else
  const __m256i low4 = _mm256_set1_epi8(15), two = _mm256_set1_epi8(0x30);
  __m256i sum = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h, ql += 64, qh += 32, sc += 8, y += 128) {
    const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
    const __m256i la = load32(ql), lb = load32(ql + 32), hb = load32(qh);
    const __m256i q[4] = {
        _mm256_or_si256(_mm256_and_si256(la, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 4), two)),
        _mm256_or_si256(_mm256_and_si256(lb, low4), _mm256_and_si256(_mm256_slli_epi16(hb, 2), two)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(la, 4), low4), _mm256_and_si256(hb, two)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lb, 4), low4), _mm256_and_si256(_mm256_srli_epi16(hb, 2), two))};
    for (int i = 0; i < 4; ++i)  // 32 elements = sub-blocks 2i (low 128 bits) and 2i+1 (high)
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[i], load32(y + 32 * i)), lanes16(scales, 2 * i, 2 * i + 1)));
  }
  return sum;
#endif
}

inline float dot_q6k(const uint8_t* p, const Q8Row& x) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < x.k / 256; ++b, p += kQ6_KBytes) {
    prefetch_ahead(p), prefetch_ahead(p + 64), prefetch_ahead(p + 128), prefetch_ahead(p + 192);  // 210 bytes
    const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)));
    const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(load32(x.sum16 + 16 * b), sc16), 5);  // 32 sc_j (sum y)_j
    const __m256i sum = _mm256_sub_epi32(q6k_sums(p, p + 128, sc, x.q + 256 * b), offset);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(half_at(p + 208) * x.d[b]), acc);
  }
  return hsum8(acc);
}

inline float dot_row_q8_kernel(DType t, const uint8_t* p, const Q8Row& x) {
  switch (t) {
    case DType::Q8_0: return dot_blocks32<quants_q8_0>(p, kQ8_0Bytes, x);
    case DType::Q4_0: return dot_blocks32<quants_q4_0>(p, kQ4_0Bytes, x);
    case DType::Q5_0: return dot_blocks32<quants_q5_0>(p, kQ5_0Bytes, x);
    case DType::Q4_K: return dot_q4k_q5k<false>(p, x);
    case DType::Q5_K: return dot_q4k_q5k<true>(p, x);
    case DType::Q6_K: return dot_q6k(p, x);
    default: qdot_bad_type(t);
  }
}

#else

inline float dot_row_q8_kernel(DType t, const uint8_t* p, const Q8Row& x) {
  return static_cast<float>(dot_row_q8_reference(t, p, x));
}

#endif

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
