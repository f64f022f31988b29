// exp() for float32 that the compiler can vectorise (std::exp is a libm call and blocks
// vectorisation without -ffast-math). Cephes expf polynomial: relative error about 2e-7 over
// the whole range; inputs below -87.3 give exactly 0 (so masked scores of -inf vanish) and
// inputs above 88.3 are clamped (finite result, never inf).
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/isa.h"

namespace bosch::kernels {
inline namespace BOSCH_ISA {  // one copy per instruction set (kernels/isa.h)

// 16 floats: one AVX-512 register, or two AVX2 registers (GCC/Clang vector extension).
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));

inline vf16 vf16_load(const float* p) {
  vf16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void vf16_store(float* p, vf16 v) { std::memcpy(p, &v, sizeof v); }
inline vf16 vf16_splat(float x) { return vf16{} + x; }

namespace detail {
constexpr float kExpHi = 88.3762626647949f, kExpLo = -87.3365447505531f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;
}  // namespace detail

inline float fast_exp(float x) {
  using namespace detail;
  const float xc = x > kExpHi ? kExpHi : (x < kExpLo ? kExpLo : x);
  const float t = xc * kLog2e + kRound;
  int32_t ti;
  std::memcpy(&ti, &t, 4);
  const float n = t - kRound;
  const float r = xc - n * kLn2Hi - n * kLn2Lo;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  const float y = p * r * r + r + 1.0f;
  const int32_t bits = (ti - 0x4B400000 + 127) << 23;  // 2^n
  float scale;
  std::memcpy(&scale, &bits, 4);
  return x < kExpLo ? 0.0f : y * scale;
}

inline vf16 fast_exp(vf16 x) {
  using namespace detail;
  const vf16 hi = vf16_splat(kExpHi), lo = vf16_splat(kExpLo);
  vf16 xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  const vf16 t = xc * kLog2e + kRound;
  const vi16 ti = (vi16)t;  // GCC vector casts reinterpret bits
  const vf16 n = t - kRound;
  const vf16 r = xc - n * kLn2Hi - n * kLn2Lo;
  vf16 p = vf16_splat(kP0);
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  const vf16 y = p * r * r + r + 1.0f;
  const vi16 bits = (ti - 0x4B400000 + 127) << 23;
  const vf16 scale = (vf16)bits;
  return x < lo ? vf16{} : y * scale;
}

// x[i] = exp(x[i] - shift) for i < n; returns the sum of the results (lane-wise, then in double).
inline double exp_shift_sum(float* x, int64_t n, float shift) {
  vf16 acc{};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const vf16 e = fast_exp(vf16_load(x + i) - shift);
    vf16_store(x + i, e);
    acc += e;
  }
  double s = 0;
  for (int l = 0; l < 16; ++l) s += acc[l];
  for (; i < n; ++i) {
    x[i] = fast_exp(x[i] - shift);
    s += x[i];
  }
  return s;
}

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
