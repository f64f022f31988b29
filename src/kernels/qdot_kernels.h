// The decode dot kernels (qdot.h) on packed blocks, compiled once per instruction set: included
// only by isa_avx2.cpp and isa_avx512.cpp (kernels/dispatch.h). Both builds have AVX2/FMA/F16C;
// the AVX-512 build also widens the compiler's own vectorisation of the plain loops.
#pragma once
#include <algorithm>
#include <cstring>

#include "formats/quant.h"
#include "kernels/dispatch.h"
#include "kernels/isa.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define BOSCH_QDOT_AVX2 1
#include <immintrin.h>
#else
#define BOSCH_QDOT_AVX2 0
#endif

namespace bosch {
[[noreturn]] void qdot_bad_type(DType t);  // qdot.cpp: the error, kept out of the kernels
}

namespace bosch::kernels {
inline namespace BOSCH_ISA {

using namespace quant;

// Block scales: the F16C instruction where built (exact, like f16_to_f32, without its branches;
// one scale per 32 elements made the scalar conversion the bottleneck of Q8_0/Q4_0).
inline float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
#if BOSCH_QDOT_AVX2
  return _cvtsh_ss(h);
#else
  return f16_to_f32(h);
#endif
}

// Decode streams each weight byte once from memory. On this project's VM the hardware prefetcher
// alone left the int8 kernels at 0.5-0.65 of the read bandwidth on one host (bench qdot, 256
// MiB); asking for the line decode_prefetch_bytes on (dispatch.h), once per 64 bytes consumed,
// gave 0.85-1.0 (2048-4096 bytes best of 256-8192). Rows are contiguous, so past a row's end it
// fetches the next row's start; a prefetch past the matrix is a no-op.
inline void prefetch_ahead(const void* p) {
#if BOSCH_QDOT_AVX2
  if (const int d = decode_prefetch_bytes) _mm_prefetch(static_cast<const char*>(p) + d, _MM_HINT_T0);
#else
  (void)p;
#endif
}

// Accumulates sums of scale * (int8 quants . x) and -scale * sum(x) over a row, in 8 float
// lanes with AVX2 (one horizontal sum per row), else in one float. n is a multiple of 8.
#if BOSCH_QDOT_AVX2
inline float hsum8(__m256 t) {
  __m128 r = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}
#if defined(__AVX512F__)
using v16sf = float __attribute__((vector_size(64)));
inline float hsum16(__m512 v) {  // by GCC vector shuffles: its extract intrinsics warn (bug 105593)
  const auto a = reinterpret_cast<v16sf>(v);
  const auto lo = reinterpret_cast<__m256>(__builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7));
  const auto hi = reinterpret_cast<__m256>(__builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15));
  return hsum8(_mm256_add_ps(lo, hi));
}
#endif

// Four independent accumulators: consecutive 8-element chunks go to different ones, so the
// FMAs do not wait on each other (a single chain is latency-bound).
struct Acc {
  __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  __m256 v = _mm256_setzero_ps();  // used by the F16/BF16/F32 loop for its final sum
  // Chunk c of a call goes to accumulator c % 4: with n a constant at every (inlined) call the
  // loop unrolls and a[] stays in registers (a running index would spill it to the stack).
  void qx(float s, const int8_t* q, const float* x, int n) {
    const __m256 sv = _mm256_set1_ps(s);
    for (int i = 0; i < n; i += 8) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + i));
      const __m256 w = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), sv);
      a[(i / 8) & 3] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x + i), a[(i / 8) & 3]);
    }
  }
  void sx(float s, const float* x, int n) {
    const __m256 sv = _mm256_set1_ps(s);
    for (int i = 0; i < n; i += 8) a[(i / 8) & 3] = _mm256_fnmadd_ps(sv, _mm256_loadu_ps(x + i), a[(i / 8) & 3]);
  }
  float total() const { return hsum8(_mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(_mm256_add_ps(a[2], a[3]), v))); }
};
#else
struct Acc {
  float v = 0;
  void qx(float s, const int8_t* q, const float* x, int n) {
    float a = 0;
    for (int i = 0; i < n; ++i) a += static_cast<float>(q[i]) * x[i];
    v += s * a;
  }
  void sx(float s, const float* x, int n) {
    float a = 0;
    for (int i = 0; i < n; ++i) a += x[i];
    v -= s * a;
  }
  float total() const { return v; }
};
#endif

// Quants of one block unpacked to int8 (the block's values are scale * q - min per group).
// With AVX2 the nibbles are split in registers and stored as whole vectors: byte-wise stores
// read back by 8-byte loads would stall store forwarding (10x slower, measured).
inline void unpack_q4_0(const uint8_t* b, int8_t* q) {
#if BOSCH_QDOT_AVX2
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
  const __m128i m = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
  _mm_store_si128(reinterpret_cast<__m128i*>(q), _mm_sub_epi8(_mm_and_si128(v, m), eight));
  _mm_store_si128(reinterpret_cast<__m128i*>(q + 16), _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), m), eight));
  return;
#endif
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>((b[2 + j] & 0x0f) - 8);
    q[j + 16] = static_cast<int8_t>((b[2 + j] >> 4) - 8);
  }
}
inline void unpack_q5_0(const uint8_t* b, int8_t* q) {
  uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<int8_t>(((b[6 + j] & 0x0f) | (((qh >> j) & 1) << 4)) - 16);
    q[j + 16] = static_cast<int8_t>(((b[6 + j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16);
  }
}
// Q4_K / Q5_K: 0..15 (0..31 with the qh bit), sub-block 2g from low nibbles, 2g+1 from high.
inline void unpack_q4_k(const uint8_t* qs, const uint8_t* qh, int8_t* q) {
#if BOSCH_QDOT_AVX2
  const __m256i m = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  const __m256i h = qh ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)) : _mm256_setzero_si256();
  for (int g = 0; g < 4; ++g, qs += 32, q += 64) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs));
    __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
    if (qh) {  // bit 2g (2g+1) of each qh byte is bit 4 of the low (high) nibble's quant
      const __m128i c0 = _mm_cvtsi32_si128(2 * g), c1 = _mm_cvtsi32_si128(2 * g + 1);
      lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(h, c0), one), 4));
      hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(h, c1), one), 4));
    }
    _mm256_store_si256(reinterpret_cast<__m256i*>(q), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(q + 32), hi);
  }
  return;
#endif
  for (int g = 0; g < 4; ++g, qs += 32, q += 64) {
    for (int l = 0; l < 32; ++l) {
      q[l] = static_cast<int8_t>(qs[l] & 0x0f);
      q[l + 32] = static_cast<int8_t>(qs[l] >> 4);
    }
    if (qh)
      for (int l = 0; l < 32; ++l) {
        q[l] = static_cast<int8_t>(q[l] | (((qh[l] >> (2 * g)) & 1) << 4));
        q[l + 32] = static_cast<int8_t>(q[l + 32] | (((qh[l] >> (2 * g + 1)) & 1) << 4));
      }
  }
}
inline void unpack_q6_k(const uint8_t* ql, const uint8_t* qh, int8_t* q) {
  for (int h = 0; h < 2; ++h, ql += 64, qh += 32, q += 128)
    for (int l = 0; l < 32; ++l) {
      q[l] = static_cast<int8_t>(((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) - 32);
      q[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32);
      q[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      q[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
    }
}

inline float dot_blocks(DType t, const uint8_t* p, const float* x, int64_t k) {
  Acc acc;
  alignas(32) int8_t q[kQK_K];
  switch (t) {
    case DType::Q8_0:
      for (int64_t i = 0; i < k; i += kQK, p += kQ8_0Bytes)
        acc.qx(half_at(p), reinterpret_cast<const int8_t*>(p + 2), x + i, kQK);
      break;
    case DType::Q4_0:
      for (int64_t i = 0; i < k; i += kQK, p += kQ4_0Bytes) {
        unpack_q4_0(p, q);
        acc.qx(half_at(p), q, x + i, kQK);
      }
      break;
    case DType::Q5_0:
      for (int64_t i = 0; i < k; i += kQK, p += kQ5_0Bytes) {
        unpack_q5_0(p, q);
        acc.qx(half_at(p), q, x + i, kQK);
      }
      break;
    case DType::Q4_K:
    case DType::Q5_K: {
      const bool five = t == DType::Q5_K;
      const size_t bytes = five ? kQ5_KBytes : kQ4_KBytes;
      for (int64_t i = 0; i < k; i += kQK_K, p += bytes) {
        unpack_q4_k(p + (five ? 48 : 16), five ? p + 16 : nullptr, q);
        const float d = half_at(p), dmin = half_at(p + 2);
        for (int j = 0; j < 8; ++j) {  // value = (d*sc) q - dmin*m per 32-element sub-block
          uint8_t sc, m;
          k_scale_min(j, p + 4, &sc, &m);
          acc.qx(d * sc, q + 32 * j, x + i + 32 * j, 32);
          acc.sx(dmin * m, x + i + 32 * j, 32);
        }
      }
      break;
    }
    case DType::Q6_K:
      for (int64_t i = 0; i < k; i += kQK_K, p += kQ6_KBytes) {
        unpack_q6_k(p, p + 128, q);
        const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
        const float d = half_at(p + 208);
        for (int j = 0; j < 16; ++j) acc.qx(d * sc[j], q + 16 * j, x + i + 16 * j, 16);
      }
      break;
    default:
      qdot_bad_type(t);
  }
  return acc.total();
}

inline float dot_plain(DType t, const uint8_t* p, const float* x, int64_t k) {
  int64_t i = 0;
  float s = 0;
#if defined(__AVX512F__)
  if (t == DType::BF16) {
    // 16 at a time in zmm registers (the AVX2 loop below takes 8 per instruction): each bf16
    // widened to its float's high half, four FMA chains.
    using v16hu = unsigned short __attribute__((vector_size(32)));
    using v16su = unsigned __attribute__((vector_size(64)));
    auto widen = [&](int64_t at) {  // convertvector, not _mm512_cvtepu16_epi32: GCC 12 warns (bug 105593)
      v16hu h;
      std::memcpy(&h, p + 2 * at, 32);
      return _mm512_castsi512_ps(reinterpret_cast<__m512i>(__builtin_convertvector(h, v16su) << 16));
    };
    __m512 a[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (; i + 64 <= k; i += 64) {
      prefetch_ahead(p + 2 * i), prefetch_ahead(p + 2 * i + 64);
      for (int c = 0; c < 4; ++c) a[c] = _mm512_fmadd_ps(widen(i + 16 * c), _mm512_loadu_ps(x + i + 16 * c), a[c]);
    }
    for (; i + 16 <= k; i += 16) a[0] = _mm512_fmadd_ps(widen(i), _mm512_loadu_ps(x + i), a[0]);
    s = hsum16(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])));
  }
#endif
#if BOSCH_QDOT_AVX2
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  const int64_t elem_bytes = t == DType::F32 ? 4 : 2;
  for (; i + 16 <= k; i += 16) {
    if (i * elem_bytes % 64 == 0) prefetch_ahead(p + i * elem_bytes);  // once per line
    __m256 w0, w1;
    if (t == DType::F32) {
      w0 = _mm256_loadu_ps(reinterpret_cast<const float*>(p) + i);
      w1 = _mm256_loadu_ps(reinterpret_cast<const float*>(p) + i + 8);
    } else {
      const __m128i h0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i));
      const __m128i h1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * i + 16));
      if (t == DType::F16) {
        w0 = _mm256_cvtph_ps(h0);
        w1 = _mm256_cvtph_ps(h1);
      } else {  // BF16: the high half of a float32
        w0 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h0), 16));
        w1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h1), 16));
      }
    }
    a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + i + 8), a1);
  }
  Acc acc;
  acc.v = _mm256_add_ps(a0, a1);
  s += acc.total();
#endif
  float w[16];
  for (; i < k; i += 16) {  // tail (and the whole row without AVX2), 16 at a time
    const int64_t n = std::min<int64_t>(16, k - i);
    dequant_blocks(t, p + i * static_cast<int64_t>(dtype_block_bytes(t)), w, static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) s += w[j] * x[i + j];
  }
  return s;
}

inline float dot_row_kernel(DType t, const uint8_t* p, const float* x, int64_t k) {
  if (!dtype_is_quantized(t)) return dot_plain(t, p, x, k);
  return dot_blocks(t, p, x, k);
}

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
