// Whole blocks of a matrix in its stored type dequantised to float32 by the active kernel set
// (dequant_kernels.h, kernels/dispatch.h): the prefill tiles and get_row of qmatmul.cpp.
// The values are dequant_blocks' (formats/dtype.h, the scalar reference), bit for bit.
#pragma once
#include <cstddef>

#include "formats/dtype.h"

namespace bosch {

// nblocks whole blocks (elements for F32/F16/BF16) from src into dst, on the calling thread.
void dequant_blocks_fast(DType t, const void* src, float* dst, size_t nblocks);

}  // namespace bosch
