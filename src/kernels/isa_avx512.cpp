// The AVX-512 kernel set: this file alone is compiled with -march=x86-64-v4 (CMakeLists.txt) and
// runs only where dispatch.cpp finds those features; vf16 becomes one zmm register.
#define BOSCH_ISA avx512
#include "kernels/isa_kernels.h"

namespace bosch::kernels {

namespace {
constinit const KernelSet kSet = make_kernel_set("avx512", "avx512f, avx512bw, avx512vl, avx512dq, avx512cd");
}

const KernelSet& avx512_kernel_set() { return kSet; }

}  // namespace bosch::kernels
