// Linear layers whose weights stay in their stored type (kernels/qdot.h lists the types).
// A WeightView is a [rows, cols] row-major matrix in the PyTorch [out, in] layout; it owns
// nothing (the bytes usually lie in a memory-mapped model file).
#pragma once
#include <cstddef>
#include <cstdint>

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
// matmul_nt of ops.h); other types: one row of x (decode) takes dot products on the packed
// blocks, more rows (prefill) dequantise tiles of weight rows into a per-thread buffer and
// multiply each tile with sgemm.
void matmul_nt(const float* x, const WeightView& w, float* y, int m, bool accumulate = false);
// The same with every weight row dequantised whole and summed in double (tests).
void matmul_nt_reference(const float* x, const WeightView& w, float* y, int m);
// out[cols] = row r of W as float32 (embedding lookup on a quantised token_embd).
void get_row(const WeightView& w, int64_t r, float* out);
// Rows per dequantised prefill tile for rows of `cols` elements (tests use it to cross tiles).
int64_t qmatmul_tile_rows(int64_t cols);

}  // namespace bosch
