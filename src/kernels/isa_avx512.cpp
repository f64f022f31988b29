// The AVX-512 kernel set: this file alone is compiled with -march=x86-64-v4 (CMakeLists.txt) and
// runs only where dispatch.cpp finds those features; vf16 becomes one zmm register.
#define BOSCH_ISA avx512
#include "kernels/isa_kernels.h"
#include "kernels/gemm_bf16_kernels.h"

namespace bosch::kernels {

inline namespace BOSCH_ISA {  // (tests/kernels/check_isa.py: AVX-512 only in this namespace)

// w . x for a BF16 row and x already rounded to bf16: 32 products per vdpbf16ps (each exact in
// float32, summed in float32), two chains. AVX512_BF16 is beyond x86-64-v4: compiled for it
// here alone and reached only through bf16_x_dot(), which checks the CPU.
__attribute__((target("avx512bf16"))) float dot_row_bf16x(const uint8_t* w, const uint16_t* xb, int64_t k) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= k; i += 64) {
    prefetch_ahead(w + 2 * i), prefetch_ahead(w + 2 * i + 64);
    a0 = _mm512_dpbf16_ps(a0, reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + 2 * i)),
                          reinterpret_cast<__m512bh>(_mm512_loadu_si512(xb + i)));
    a1 = _mm512_dpbf16_ps(a1, reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + 2 * i + 64)),
                          reinterpret_cast<__m512bh>(_mm512_loadu_si512(xb + i + 32)));
  }
  float s = hsum16(_mm512_add_ps(a0, a1));
  for (; i < k; ++i) {
    uint16_t h;
    std::memcpy(&h, w + 2 * i, 2);
    s += bf16_to_f32(h) * bf16_to_f32(xb[i]);
  }
  return s;
}

}  // namespace BOSCH_ISA

namespace {

constexpr KernelSet with_bf16(KernelSet s) {
  s.dot_row_bf16x = &dot_row_bf16x;
  s.round_x_bf16 = &round_x_to_bf16;
  s.gemm_rows_bf16 = &gemm_rows_bf16_kernel;
  return s;
}

constinit const KernelSet kSet = with_bf16(make_kernel_set("avx512", "avx512f, avx512bw, avx512vl, avx512dq, avx512cd"));

}  // namespace

const KernelSet& avx512_kernel_set() { return kSet; }

}  // namespace bosch::kernels
