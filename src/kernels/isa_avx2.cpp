// The baseline kernel set: the build's own target (x86-64-v3 by default: AVX2, FMA, F16C).
#define BOSCH_ISA avx2
#include "kernels/isa_kernels.h"

namespace bosch::kernels {

const KernelSet& avx2_kernel_set() {
  static const KernelSet s = make_kernel_set("avx2", "avx2, fma, f16c");
  return s;
}

}  // namespace bosch::kernels
