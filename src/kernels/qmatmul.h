// Linear layers whose weights stay in their stored type (kernels/qdot.h lists the types).
// A WeightView is a [rows, cols] row-major matrix in the PyTorch [out, in] layout; it owns
// nothing (the bytes usually lie in a memory-mapped model file).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "formats/dtype.h"

namespace bosch {

struct WeightView {
  DType type = DType::F32;
  const void* data = nullptr;
  int64_t rows = 0, cols = 0;
  size_t row_bytes() const { return dtype_bytes(type, static_cast<size_t>(cols)); }
  size_t bytes() const { return row_bytes() * static_cast<size_t>(rows); }
  const uint8_t* row(int64_t r) const { return static_cast<const uint8_t*>(data) + row_bytes() * r; }
};

// y[m, rows] = x[m, cols] * W^T (+ y if accumulate). F32 weights go straight to BLAS (the float
// matmul_nt of ops.h); other types: one row of x takes dot products on the packed blocks
// (qdot.h; with quantised weights inside an Int8Decode: x quantised to 8 bits once, integer
// dots, qdot_int8.h), more rows (prefill) take the packed-panel product of gemm_kernels.h
// (a build without AVX2: tiles of weight rows dequantised into a per-thread buffer, then sgemm).
void matmul_nt(const float* x, const WeightView& w, float* y, int m, bool accumulate = false);

// Several products of one x[m, cols] (q, k and v; gate and up): y_i = x * W_i^T, each as
// matmul_nt computes it (the same bits). With one row, one parallel section covers the rows of
// all of them: a decode token pays one hand-over to the pool and one quantisation of x per
// group instead of one per matrix. The weights must share cols.
struct Product {
  const WeightView& w;
  float* y;
};
void matmul_nt_shared_x(const float* x, std::initializer_list<Product> products, int m);

// While one lives, one-row products on the calling thread take llama.cpp's decode arithmetic:
// x quantised to 8 bits (about 1/254 of its block's max per element), integer dots read the
// weights at memory speed; on BF16 weights, where the CPU has AVX512_BF16, x rounded to bf16
// (2^-8 relative at most) and vdpbf16ps dots (kernels::bf16_x_dot). Model::forward_next makes
// one for a single new token. Everything else (prefill, the search's scored rows, a MoE expert
// handed one token of a prefill) keeps float x: no 8-bit rounding depends on how rows were
// batched (sgemm's own blocking still moves the low bits with the row count).
// Nests; not shared by threads.
class Int8Decode {
 public:
  Int8Decode();
  ~Int8Decode();
  Int8Decode(const Int8Decode&) = delete;
  Int8Decode& operator=(const Int8Decode&) = delete;
  static bool active();

 private:
  bool prev_;
};
// The same with every weight row dequantised whole and summed in double (tests).
void matmul_nt_reference(const float* x, const WeightView& w, float* y, int m);
// out[cols] = row r of W as float32 (embedding lookup on a quantised token_embd).
void get_row(const WeightView& w, int64_t r, float* out);
// Rows per dequantised prefill tile in a build without AVX2, for rows of `cols` elements.
int64_t qmatmul_tile_rows(int64_t cols);

}  // namespace bosch
