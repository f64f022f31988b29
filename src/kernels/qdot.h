// Dot products of one weight row in its stored type (F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K,
// Q5_K, Q6_K) with a float32 vector: the decode kernels (one token, weights read once).
// dot_row works on the packed blocks (qdot_kernels.h: AVX2/FMA, or AVX-512 where the CPU has
// it, kernels/dispatch.h);
// dot_row_reference dequantises the row and sums in double: the tests' reference.
#pragma once
#include <cstdint>

#include "formats/dtype.h"

namespace bosch {

// sum_j w[j] * x[j] for the k elements of the row at `row` (k a multiple of the block size).
float dot_row(DType t, const void* row, const float* x, int64_t k);
double dot_row_reference(DType t, const void* row, const float* x, int64_t k);

}  // namespace bosch
