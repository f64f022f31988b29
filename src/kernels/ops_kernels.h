// The elementwise kernels of ops.cpp, compiled once per instruction set: included only by
// isa_avx2.cpp and isa_avx512.cpp (kernels/dispatch.h). vf16 is one AVX-512 register or two
// AVX2 registers, so the same source serves both.
#pragma once
#include <cmath>
#include <limits>

#include "kernels/fast_exp.h"

namespace bosch::kernels {
inline namespace BOSCH_ISA {

// Sum of squares with 16 independent float lanes (vectorises without reassociation flags).
inline double sum_squares(const float* x, int n) {
  vf16 acc{};
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const vf16 v = vf16_load(x + i);
    acc += v * v;
  }
  double s = 0;
  for (int l = 0; l < 16; ++l) s += acc[l];
  for (; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}

inline void rmsnorm_row(const float* x, const float* weight, float* out, int dim, float eps) {
  const float inv = static_cast<float>(1.0 / std::sqrt(sum_squares(x, dim) / dim + eps));
  for (int i = 0; i < dim; ++i) out[i] = x[i] * inv * weight[i];
}

inline void swiglu_kernel(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const vf16 g = vf16_load(gate + i);
    // silu(g) = g / (1 + exp(-g)); fast_exp clamps, so no inf/NaN for large |g|.
    vf16_store(out + i, g / (1.0f + fast_exp(-g)) * vf16_load(up + i));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + fast_exp(-gate[i])) * up[i];
}

inline float max_of(const float* x, int64_t n) {
  vf16 m = vf16_splat(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const vf16 v = vf16_load(x + i);
    m = v > m ? v : m;
  }
  float r = -std::numeric_limits<float>::infinity();
  for (int l = 0; l < 16; ++l) r = r < m[l] ? m[l] : r;
  for (; i < n; ++i) r = r < x[i] ? x[i] : r;
  return r;
}

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
