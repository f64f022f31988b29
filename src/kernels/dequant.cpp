#include "kernels/dequant.h"

#include <cstdint>

#include "kernels/dispatch.h"

namespace bosch {

void dequant_blocks_fast(DType t, const void* src, float* dst, size_t nblocks) {
  kernels::active_kernels().dequant(t, static_cast<const uint8_t*>(src), dst, nblocks);  // dequant_kernels.h
}

}  // namespace bosch
