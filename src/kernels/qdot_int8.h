// Integer decode dot products (llama.cpp's arithmetic for quantised weights): x is quantised to
// 8 bits once per matrix-vector product, then each weight row's packed quants are multiplied
// with those int8 values in integer SIMD (qdot_int8_kernels.h), one float multiply-add per block
// with the two scales. The float kernels of qdot.h widen every quant to float32 instead and are
// compute-bound; these read the weights at memory speed. Q8_0, Q4_0, Q5_0 weights take x in
// blocks of 32, the K-quants (Q4_K, Q5_K, Q6_K) in blocks of 256 plus the sums of each 16 quants
// (their per-sub-block min / offset terms are then one integer product per 16 or 32 elements).
//
// Error: q[i] is the nearest integer to x[i] / d0, d0 = max|x| of its block / 127, and x[i] is
// replaced by d q[i] with d = d0 (blocks of 256) or d0 rounded to fp16 (blocks of 32, as ggml's
// block_q8_0 stores it): |x[i] - d q[i]| <= d0 / 2 + 127 |d0 - d|. So |dot_row_q8 - exact| <=
// sum_i |w[i]| (d0 / 2 + 127 |d0 - d|) plus float rounding of the block sums.
#pragma once
#include <cstdint>
#include <vector>

#include "formats/dtype.h"

namespace bosch {

// x quantised: x[i] ~ d[i / block] * q[i]. Points into a Q8Buffer.
struct Q8Row {
  const int8_t* q = nullptr;       // k quants in [-127, 127]
  const float* d = nullptr;        // one scale per block; NaN where the block had a NaN or Inf
  const int16_t* sum16 = nullptr;  // sum of each 16 consecutive quants (k / 16)
  int64_t k = 0;
  int block = 0;                   // 32 or 256
  // Blocks of 256 only (else null), for the Q4_K/Q5_K kernels: sum32, the sum of each 32 quants
  // (k / 32: their min terms); qk (the AVX-512 kernel), q with each 128's sub-blocks of 32 in
  // the order 0, 2, 1, 3, which is how one 64-byte load of quants splits into low and high nibbles.
  const int16_t* sum32 = nullptr;
  const int8_t* qk = nullptr;
};

// x's block size for weights of type t: 32 (Q8_0, Q4_0, Q5_0), 256 (Q4_K, Q5_K, Q6_K), 0 for the
// types that stay on the float path (F32, F16, BF16).
int q8_block(DType t);

// Quantises x[k] (k a multiple of block) into q, d, sum16: per block q the nearest integer of
// x / (max|x| / 127) (ties to even) and d that scale (fp16-rounded for blocks of 32). A block
// holding NaN or Inf gets d = NaN and q = 0, so every dot product with it is NaN, as the float
// path's would be.
void quantize_row_q8(const float* x, int64_t k, int block, int8_t* q, float* d, int16_t* sum16);

// Owns the quantised copy of one x; reused across calls (no allocation once grown).
class Q8Buffer {
 public:
  Q8Row quantize(const float* x, int64_t k, int block);

 private:
  std::vector<int8_t> q_;
  std::vector<float> d_;
  std::vector<int16_t> sum16_, sum32_;
  std::vector<int8_t> qk_;
};

// sum_j w[j] * x~[j] over the k = x.k elements of one weight row of type t (x.block must be
// q8_block(t)): the dispatched SIMD kernel (kernels/dispatch.h).
float dot_row_q8(DType t, const void* row, const Q8Row& x);

// The same in plain C++: exact integer sums per block, combined in double with the scale
// products rounded to float as the kernels round them (the tests' reference). *magnitude (if
// given) receives the sum of |every product| the kernels add (quant x quant x scales, min and
// offset terms on their own): their float rounding is bounded relative to it.
double dot_row_q8_reference(DType t, const void* row, const Q8Row& x, double* magnitude = nullptr);

}  // namespace bosch
