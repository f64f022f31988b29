// The table of one instruction set's kernels (kernels/dispatch.h). Included by isa_avx2.cpp and
// isa_avx512.cpp only, after each defines BOSCH_ISA; CMake gives isa_avx512.cpp its flags.
#pragma once
#include "kernels/attention_kernels.h"
#include "kernels/dequant_kernels.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_kernels.h"
#include "kernels/ops_kernels.h"
#include "kernels/qdot_int8_kernels.h"
#include "kernels/qdot_kernels.h"

namespace bosch::kernels {
inline namespace BOSCH_ISA {

// constexpr, and the tables constinit (isa_*.cpp): no code fills them at run time. Filling one at
// run time took the AVX-512 set's own wide stores (zmm) on every CPU, since cpu_runs() looks at
// the table before it knows whether the CPU has AVX-512: SIGILL on AVX2-only machines.
constexpr KernelSet make_kernel_set(const char* name, const char* features) {
  KernelSet s;
  s.name = name;
  s.features = features;
  s.attention = &attention_items;
  s.dot_row = &dot_row_kernel;
  s.dot_row_q8 = &dot_row_q8_kernel;
  s.dequant = &dequant_kernel;
#if BOSCH_QDOT_AVX2
  s.gemm_rows = &gemm_rows_kernel;
#endif
  s.rmsnorm_row = &rmsnorm_row;
  s.swiglu = &swiglu_kernel;
  s.max_of = &max_of;
  s.exp_shift_sum = &exp_shift_sum;
  return s;
}

}  // namespace BOSCH_ISA
}  // namespace bosch::kernels
