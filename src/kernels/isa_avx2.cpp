// The baseline kernel set: the build's own target (x86-64-v3 by default: AVX2, FMA, F16C).
#define BOSCH_ISA avx2
#include "kernels/isa_kernels.h"

namespace bosch::kernels {

namespace {
constinit const KernelSet kSet = make_kernel_set("avx2", "avx2, fma, f16c");
}

const KernelSet& avx2_kernel_set() { return kSet; }

}  // namespace bosch::kernels
