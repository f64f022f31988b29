// The BF16 prefill product (issue #44): y[m, rows] (+)= x[m, k] * W^T with x and W rounded to
// bfloat16 and products summed in float32 by vdpbf16ps (AVX512_BF16: 32 multiply-adds per
// instruction against the 16 of a float32 FMA). Included by isa_avx512.cpp alone: AVX512_BF16
// is beyond x86-64-v4, so every function here carries target("avx512bf16") and is reached only
// through dispatch.h's bf16_gemm(), which checks the CPU.
//
// The blocking is gemm_kernels.h's (its f32 panels are built the same way, by gemm_pack), then
// each panel is rounded to bf16 in pairs of columns: pair p of row r at [(p * 32 + r) * 2 + j],
// so one 64-byte load holds 16 rows x 2 columns, the operand vdpbf16ps takes, and x's pair
// (x[2p], x[2p + 1]) is one 32-bit broadcast. An odd k gets a zero column. Each output is a
// chain of vdpbf16ps per 256-column block, the blocks added in column order: its bits depend
// on neither m nor the thread count.
#pragma once
#include <immintrin.h>

#include <memory>

#include "kernels/gemm_kernels.h"

namespace bosch::kernels {
inline namespace BOSCH_ISA {

#if defined(__AVX512F__)

#define BOSCH_BF16 __attribute__((target("avx512bf16")))

constexpr int64_t kBf16PanelPairs = kGemmKBlock / 2;
constexpr size_t kBf16PanelHalves = kGemmPanelRows * kGemmKBlock;  // uint16 per panel

// out[i] = bf16(x[i]), round to nearest even (denormals flush to zero, as vcvtneps2bf16 does).
BOSCH_BF16 inline void round_to_bf16(const float* x, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i))));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm256_mask_storeu_epi16(out + i, m,
                             reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + i))));
  }
}

// x[m, k] rounded to bf16 rows of ldxb = k rounded up to even halves (the pad column is 0).
BOSCH_BF16 inline void round_x_to_bf16(const float* x, int64_t m, int64_t k, uint16_t* xb) {
  const int64_t ld = k + (k & 1);
  for (int64_t t = 0; t < m; ++t) {
    round_to_bf16(x + t * k, xb + t * ld, k);
    if (k & 1) xb[t * ld + k] = 0;
  }
}

// The f32 panel of gemm_pack (column l's 32 rows at f[l * 32]) as bf16 pairs; kb columns, an
// odd last one paired with zeros.
BOSCH_BF16 inline void panel_to_bf16(const float* f, int64_t kb, uint16_t* out) {
  const int64_t pairs = (kb + 1) / 2;
  for (int64_t p = 0; p < pairs; ++p) {
    const bool has_odd = 2 * p + 1 < kb;
    for (int h = 0; h < 2; ++h) {  // rows 0-15, 16-31
      const __m512 a = _mm512_load_ps(f + (2 * p) * kGemmPanelRows + h * 16);
      const __m512 b = has_odd ? _mm512_load_ps(f + (2 * p + 1) * kGemmPanelRows + h * 16) : _mm512_setzero_ps();
      // (maskz with all lanes: GCC 12's plain forms warn about their undefined source, bug 105593)
      const __m512i lo = _mm512_maskz_cvtepu16_epi32(0xffff, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(a)));
      const __m512i hi = _mm512_maskz_cvtepu16_epi32(0xffff, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(b)));
      _mm512_store_si512(out + p * 64 + h * 32, _mm512_or_si512(lo, _mm512_maskz_slli_epi32(0xffff, hi, 16)));
    }
  }
}

// y[t * ldy + r] (+)= sum over pairs of panel . x, for t < NT and r < rows.
template <int NT>
BOSCH_BF16 void gemm_micro_bf16(const uint16_t* panel, int64_t pairs, const uint16_t* xb, int64_t ldxb, float* y,
                                int64_t ldy, int rows, bool add) {
  __m512 c0[NT], c1[NT];
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) c0[t] = c1[t] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p, panel += 64) {
    const __m512bh w0 = reinterpret_cast<__m512bh>(_mm512_load_si512(panel));
    const __m512bh w1 = reinterpret_cast<__m512bh>(_mm512_load_si512(panel + 32));
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      int32_t pair;
      __builtin_memcpy(&pair, xb + t * ldxb + 2 * p, 4);
      const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
      c0[t] = _mm512_dpbf16_ps(c0[t], w0, b);
      c1[t] = _mm512_dpbf16_ps(c1[t], w1, b);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) {
    gemm_store(y + t * ldy, c0[t], rows, add);
    if (rows > kGemmLanes) gemm_store(y + t * ldy + kGemmLanes, c1[t], rows - kGemmLanes, add);
  }
}

using GemmMicroBf16 = void (*)(const uint16_t*, int64_t, const uint16_t*, int64_t, float*, int64_t, int, bool);
template <size_t... I>
constexpr auto gemm_micro_bf16_table(std::index_sequence<I...>) {
  return std::array<GemmMicroBf16, sizeof...(I)>{&gemm_micro_bf16<static_cast<int>(I) + 1>...};
}
inline constexpr auto kGemmMicroBf16 = gemm_micro_bf16_table(std::make_index_sequence<kGemmTokens>());

struct alignas(64) GemmBf16Buffer {
  float tmp[kPanelFloats];
  float panel[kPanelFloats];
  uint16_t panels[kGemmPanels * kBf16PanelHalves];
};

// Rows [r_begin, r_end) of y (+)= x * W^T with x already rounded (round_x_to_bf16: xb, ldxb).
BOSCH_BF16 inline void gemm_rows_bf16_kernel(const GemmArgs& a, const uint16_t* xb, int64_t ldxb, int64_t r_begin,
                                             int64_t r_end) {
  constexpr int64_t kBlockRows = kGemmPanels * kGemmPanelRows;
  thread_local std::unique_ptr<GemmBf16Buffer> buf;
  if (!buf) buf.reset(new GemmBf16Buffer);
  const size_t row_bytes = dtype_bytes(a.type, static_cast<size_t>(a.k));
  for (int64_t p0 = r_begin; p0 < r_end; p0 += kBlockRows) {
    const int64_t block_rows = std::min(kBlockRows, r_end - p0);
    const int np = static_cast<int>((block_rows + kGemmPanelRows - 1) / kGemmPanelRows);
    auto first_row = [&](int p) { return p0 + p * kGemmPanelRows; };
    auto rows_of = [&](int p) { return static_cast<int>(std::min<int64_t>(kGemmPanelRows, r_end - first_row(p))); };
    for (int64_t k0 = 0; k0 < a.k; k0 += kGemmKBlock) {
      const int64_t kb = std::min(kGemmKBlock, a.k - k0);
      for (int p = 0; p < np; ++p) {
        gemm_pack(a.type, a.w + first_row(p) * row_bytes, row_bytes, k0, kb, rows_of(p), buf->tmp, buf->panel);
        panel_to_bf16(buf->panel, kb, buf->panels + p * kBf16PanelHalves);
      }
      const bool add = a.accumulate || k0 > 0;
      const int64_t pairs = (kb + 1) / 2;
      for (int64_t t0 = 0; t0 < a.m; t0 += kGemmTokens) {
        const GemmMicroBf16 micro =
            kGemmMicroBf16[static_cast<size_t>(std::min<int64_t>(kGemmTokens, a.m - t0) - 1)];
        for (int p = 0; p < np; ++p)
          micro(buf->panels + p * kBf16PanelHalves, pairs, xb + t0 * ldxb + k0, ldxb, a.y + t0 * a.ldy + first_row(p),
                a.ldy, rows_of(p), add);
      }
    }
  }
}

#undef BOSCH_BF16

#endif  // __AVX512F__

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
