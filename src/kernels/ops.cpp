#include "kernels/ops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "formats/dtype.h"
#include "kernels/blas_threads.h"
#include "kernels/dispatch.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch {

void matmul_nt(const float* x, const float* w, float* y, int m, int n, int k, bool accumulate) {
  check(m >= 0 && n >= 0 && k >= 0, "matmul_nt: negative shape m={} n={} k={}", m, n, k);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS rejects lda = 0; the product is empty.
    if (!accumulate) std::fill(y, y + static_cast<int64_t>(m) * n, 0.0f);
    return;
  }
  const float beta = accumulate ? 1.0f : 0.0f;
  kernels::split_rows(n, [&](int64_t r0, int64_t r1) {
    const int rows = static_cast<int>(r1 - r0);
    const float* wr = w + r0 * k;
    if (m == 1) {  // decode: y = W x is a matrix-vector product
      cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, k, 1.0f, wr, k, x, 1, beta, y + r0, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, rows, k, 1.0f, x, k, wr, k, beta, y + r0, n);
    }
  });
}

void matmul_nt_reference(const float* x, const float* w, float* y, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int t = 0; t < k; ++t)
        s += static_cast<double>(x[static_cast<int64_t>(i) * k + t]) * w[static_cast<int64_t>(j) * k + t];
      y[static_cast<int64_t>(i) * n + j] = static_cast<float>(s);
    }
}

namespace {

// Rows per parallel chunk so that one chunk holds at least ~32K elements.
size_t row_grain(int64_t row_len) { return static_cast<size_t>(std::max<int64_t>(1, 32768 / std::max<int64_t>(1, row_len))); }

}  // namespace

void rmsnorm(const float* x, const float* weight, float* out, int rows, int dim, float eps) {
  if (rows <= 0 || dim <= 0) return;
  const kernels::KernelSet& ks = kernels::active_kernels();  // ops_kernels.h
  parallel_for(rows, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      ks.rmsnorm_row(x + r * dim, weight, out + r * dim, dim, eps);
    }
  }, row_grain(dim));
}

void rope_rotate_half(float* x, int n_tok, int64_t pos0, int n_heads, int head_dim,
                      int64_t stride, const float* inv_freq) {
  check(head_dim % 2 == 0, "rope: head_dim must be even, got {}", head_dim);
  if (n_tok <= 0 || n_heads <= 0 || head_dim == 0) return;
  const int half = head_dim / 2;
  parallel_for(n_tok, [&](size_t b, size_t e) {
    std::vector<float> cs(half), sn(half);
    for (size_t t = b; t < e; ++t) {
      // Angles in double: pos * inv_freq in float loses ~1e-3 rad at 32K positions.
      const double pos = static_cast<double>(pos0 + static_cast<int64_t>(t));
      for (int i = 0; i < half; ++i) {
        const double a = pos * static_cast<double>(inv_freq[i]);
        cs[i] = static_cast<float>(std::cos(a));
        sn[i] = static_cast<float>(std::sin(a));
      }
      for (int h = 0; h < n_heads; ++h) {
        float* v = x + static_cast<int64_t>(t) * stride + static_cast<int64_t>(h) * head_dim;
        float* __restrict lo = v;
        float* __restrict hi = v + half;
        for (int i = 0; i < half; ++i) {
          const float x0 = lo[i], x1 = hi[i];
          lo[i] = x0 * cs[i] - x1 * sn[i];
          hi[i] = x1 * cs[i] + x0 * sn[i];
        }
      }
    }
  }, row_grain(static_cast<int64_t>(n_heads) * head_dim * 4));
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
  if (n <= 0) return;
  constexpr int64_t kChunk = 4096;
  const size_t chunks = static_cast<size_t>((n + kChunk - 1) / kChunk);
  const kernels::KernelSet& ks = kernels::active_kernels();
  parallel_for(chunks, [&](size_t b, size_t e) {
    const int64_t i0 = static_cast<int64_t>(b) * kChunk;
    const int64_t i1 = std::min<int64_t>(n, static_cast<int64_t>(e) * kChunk);
    ks.swiglu(gate + i0, up + i0, out + i0, i1 - i0);
  }, 8);
}

double softmax_inplace(float* x, int n) {
  if (n <= 0) return -std::numeric_limits<double>::infinity();
  const float m = kernels::active_kernels().max_of(x, n);
  if (m == -std::numeric_limits<float>::infinity()) {  // every entry impossible: all zeros
    std::fill(x, x + n, 0.0f);
    return -std::numeric_limits<double>::infinity();
  }
  const double s = kernels::active_kernels().exp_shift_sum(x, n, m);
  const float inv = static_cast<float>(1.0 / s);
  for (int i = 0; i < n; ++i) x[i] *= inv;
  return m + std::log(s);
}

double log_sum_exp(const float* x, int n) {
  if (n <= 0) return -std::numeric_limits<double>::infinity();
  const float m = kernels::active_kernels().max_of(x, n);
  if (!std::isfinite(m)) return m;  // all -inf, an inf or a NaN decides the result
  // exp(x - m) in chunks on the stack, summed in double.
  double s = 0;
  float buf[256];
  for (int i = 0; i < n; i += 256) {
    const int len = std::min(256, n - i);
    std::copy(x + i, x + i + len, buf);
    s += kernels::active_kernels().exp_shift_sum(buf, len, m);
  }
  return m + std::log(s);
}

void floats_to_halves(const float* x, uint16_t* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) out[i] = f32_to_f16(x[i]);
}

void halves_to_floats(const uint16_t* h, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
#endif
  for (; i < n; ++i) out[i] = f16_to_f32(h[i]);
}

}  // namespace bosch
