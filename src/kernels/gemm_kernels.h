// Prefill products on weights in their stored type (qmatmul.cpp), compiled once per instruction
// set: included only by isa_kernels.h. y[m, rows] (+)= x[m, k] * W^T, GotoBLAS-style: the
// weight rows are dequantised a block of 4 panels x 256 columns at a time (128 KiB in L2 with
// AVX-512) and each panel transposed so one vector load holds one column of 2 vectors' worth of
// rows; a register-blocked micro-kernel (2 vectors of rows x 12 tokens, 24 accumulators; AVX2:
// 2 x 6) broadcasts x straight from its rows. x is never copied, whatever m, and no dequantised
// weight tile goes past L2: the sgemm-on-dequantised-tiles path it replaced wrote 4 MiB tiles
// that OpenBLAS then packed again, and re-packed x on every call (8B Q8_0 prefill at 128 tokens
// ran at 0.49-0.69 of the sgemm peak on a 2-core Xeon). Each output is an FMA chain per
// 256-column block, the blocks added into y in column order: its bits depend on neither m (>= 2)
// nor the thread count.
#pragma once
#include <algorithm>
#include <array>
#include <memory>
#include <utility>

#include "kernels/dequant_kernels.h"

namespace bosch::kernels {
inline namespace BOSCH_ISA {

#if BOSCH_QDOT_AVX2

#if defined(__AVX512F__)
using GemmVec = __m512;
constexpr int kGemmLanes = 16;
constexpr int kGemmTokens = 12;  // 24 accumulators + 2 weight vectors + a broadcast of 32 zmm
inline GemmVec gemm_load(const float* p) { return _mm512_load_ps(p); }
inline GemmVec gemm_set1(float v) { return _mm512_set1_ps(v); }
inline GemmVec gemm_fma(GemmVec a, GemmVec b, GemmVec c) { return _mm512_fmadd_ps(a, b, c); }
inline GemmVec gemm_zero() { return _mm512_setzero_ps(); }
// y[0..n) (+)= v (nothing where n <= 0)
inline void gemm_store(float* y, GemmVec v, int n, bool add) {
  const __mmask16 m = n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
  if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, y));
  _mm512_mask_storeu_ps(y, m, v);
}
// 16 rows of 16 floats (src[i * lds + j]) to dst[j * ldd + i].
// (maskz with all lanes: GCC 12's plain forms warn about their undefined source, bug 105593)
inline void gemm_transpose(const float* src, int64_t lds, float* dst, int64_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < 16; i += 2) {  // pairs of rows interleaved: (a0 b0 a1 b1 | ...), (a2 b2 a3 b3 | ...)
    t[i] = _mm512_maskz_unpacklo_ps(0xffff, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // 4 rows' element j in each 128-bit lane
    r[i] = _mm512_maskz_shuffle_ps(0xffff, t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_maskz_shuffle_ps(0xffff, t[i], t[i + 2], 0xee);
    r[i + 2] = _mm512_maskz_shuffle_ps(0xffff, t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_maskz_shuffle_ps(0xffff, t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {  // 128-bit lanes of row groups (0, 4) and (8, 12) gathered
    t[i] = _mm512_maskz_shuffle_f32x4(0xffff, r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_maskz_shuffle_f32x4(0xffff, r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_maskz_shuffle_f32x4(0xffff, r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_maskz_shuffle_f32x4(0xffff, r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    _mm512_store_ps(dst + i * ldd, _mm512_maskz_shuffle_f32x4(0xffff, t[i], t[i + 8], 0x88));
    _mm512_store_ps(dst + (i + 8) * ldd, _mm512_maskz_shuffle_f32x4(0xffff, t[i], t[i + 8], 0xdd));
  }
}
#else
using GemmVec = __m256;
constexpr int kGemmLanes = 8;
constexpr int kGemmTokens = 6;  // 12 accumulators + 2 weight vectors + a broadcast of 16 ymm
inline GemmVec gemm_load(const float* p) { return _mm256_load_ps(p); }
inline GemmVec gemm_set1(float v) { return _mm256_set1_ps(v); }
inline GemmVec gemm_fma(GemmVec a, GemmVec b, GemmVec c) { return _mm256_fmadd_ps(a, b, c); }
inline GemmVec gemm_zero() { return _mm256_setzero_ps(); }
inline void gemm_store(float* y, GemmVec v, int n, bool add) {
  const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  if (add) v = _mm256_add_ps(v, _mm256_maskload_ps(y, m));
  _mm256_maskstore_ps(y, m, v);
}
inline void gemm_transpose(const float* src, int64_t lds, float* dst, int64_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_store_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_store_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}
#endif

constexpr int kGemmPanelRows = 2 * kGemmLanes;  // rows per panel: one micro-kernel's width
constexpr int kGemmPanels = 4;                  // panels dequantised together
constexpr int64_t kGemmKBlock = 256;            // columns per panel: a multiple of every block

// y[t * ldy + r] (+)= sum over l < kb of panel[l * kGemmPanelRows + r] * x[t * ldx + l], for
// t < NT and r < rows: 2 x NT accumulators, the panel's rows along the vector lanes.
template <int NT>
void gemm_micro(const float* panel, int64_t kb, const float* x, int64_t ldx, float* y, int64_t ldy, int rows,
                bool add) {
  GemmVec c0[NT], c1[NT];
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) c0[t] = c1[t] = gemm_zero();
  for (int64_t l = 0; l < kb; ++l, panel += kGemmPanelRows) {
    const GemmVec w0 = gemm_load(panel), w1 = gemm_load(panel + kGemmLanes);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const GemmVec b = gemm_set1(x[t * ldx + l]);
      c0[t] = gemm_fma(w0, b, c0[t]);
      c1[t] = gemm_fma(w1, b, c1[t]);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) {
    gemm_store(y + t * ldy, c0[t], rows, add);
    if (rows > kGemmLanes) gemm_store(y + t * ldy + kGemmLanes, c1[t], rows - kGemmLanes, add);
  }
}

using GemmMicro = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, int, bool);
template <size_t... I>
constexpr auto gemm_micro_table(std::index_sequence<I...>) {
  return std::array<GemmMicro, sizeof...(I)>{&gemm_micro<static_cast<int>(I) + 1>...};
}
inline constexpr auto kGemmMicro = gemm_micro_table(std::make_index_sequence<kGemmTokens>());  // [nt - 1]

// panel[l * kGemmPanelRows + r] = W[r][k0 + l] for l < kb and r < rows (zero for the rows
// beyond), W's rows row_bytes apart from w; tmp holds kGemmPanelRows x kb floats.
inline void gemm_pack(DType type, const uint8_t* w, size_t row_bytes, int64_t k0, int64_t kb, int rows, float* tmp,
                      float* panel) {
  const size_t offset = dtype_bytes(type, static_cast<size_t>(k0));
  const size_t blocks = static_cast<size_t>(kb) / dtype_block(type);
  for (int r = 0; r < kGemmPanelRows; ++r) {
    float* dst = tmp + r * kb;
    if (r < rows)
      dequant_kernel(type, w + r * row_bytes + offset, dst, blocks);
    else
      for (int64_t l = 0; l < kb; ++l) dst[l] = 0.0f;
  }
  int64_t l = 0;
  for (; l + kGemmLanes <= kb; l += kGemmLanes)
    for (int r = 0; r < kGemmPanelRows; r += kGemmLanes)
      gemm_transpose(tmp + r * kb + l, kb, panel + l * kGemmPanelRows + r, kGemmPanelRows);
  for (; l < kb; ++l)  // F16/BF16 rows whose length is not a multiple of the lanes
    for (int r = 0; r < kGemmPanelRows; ++r) panel[l * kGemmPanelRows + r] = tmp[r * kb + l];
}

constexpr size_t kPanelFloats = kGemmPanelRows * kGemmKBlock;
// One thread's dequantised rows and their panels. (Allocated plainly, like attention's Scratch:
// a std::vector's out-of-line members in an unoptimised build could reach baseline code in
// their AVX-512 copy.)
struct alignas(64) GemmBuffer {
  float tmp[kPanelFloats];
  float panels[kGemmPanels * kPanelFloats];
};

// Rows [r_begin, r_end) of y[m, ldy] (+)= x[m, k] * W^T: one thread's share (dispatch.h).
inline void gemm_rows_kernel(const GemmArgs& a, int64_t r_begin, int64_t r_end) {
  constexpr int64_t kBlockRows = kGemmPanels * kGemmPanelRows;
  thread_local std::unique_ptr<GemmBuffer> buf;
  if (!buf) buf.reset(new GemmBuffer);
  float* const tmp = buf->tmp;
  float* const panels = buf->panels;
  const size_t row_bytes = dtype_bytes(a.type, static_cast<size_t>(a.k));
  for (int64_t p0 = r_begin; p0 < r_end; p0 += kBlockRows) {
    const int64_t block_rows = std::min(kBlockRows, r_end - p0);
    const int np = static_cast<int>((block_rows + kGemmPanelRows - 1) / kGemmPanelRows);
    auto first_row = [&](int p) { return p0 + p * kGemmPanelRows; };
    auto rows_of = [&](int p) { return static_cast<int>(std::min<int64_t>(kGemmPanelRows, r_end - first_row(p))); };
    for (int64_t k0 = 0; k0 < a.k; k0 += kGemmKBlock) {
      const int64_t kb = std::min(kGemmKBlock, a.k - k0);
      for (int p = 0; p < np; ++p)
        gemm_pack(a.type, a.w + first_row(p) * row_bytes, row_bytes, k0, kb, rows_of(p), tmp,
                  panels + p * kPanelFloats);
      const bool add = a.accumulate || k0 > 0;
      for (int64_t t0 = 0; t0 < a.m; t0 += kGemmTokens) {
        const GemmMicro micro = kGemmMicro[static_cast<size_t>(std::min<int64_t>(kGemmTokens, a.m - t0) - 1)];
        for (int p = 0; p < np; ++p)
          micro(panels + p * kPanelFloats, kb, a.x + t0 * a.k + k0, a.k, a.y + t0 * a.ldy + first_row(p), a.ldy,
                rows_of(p), add);
      }
    }
  }
}

#endif  // BOSCH_QDOT_AVX2

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
