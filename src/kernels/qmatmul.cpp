#include "kernels/qmatmul.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "kernels/blas_threads.h"
#include "kernels/dequant.h"
#include "kernels/dispatch.h"
#include "kernels/ops.h"
#include "kernels/qdot.h"
#include "kernels/qdot_int8.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch {

namespace {

// A tile of ~1M floats (4 MiB per thread: 64 MiB at 16 threads) keeps sgemm efficient (n >= 256
// rows for cols up to 4096) while the dequantised copy of a weight never exceeds this per
// thread, whatever the model's size.
constexpr int64_t kTileFloats = int64_t{1} << 20;
thread_local std::vector<float> tile_buf;
thread_local Q8Buffer x_q8;  // decode: x quantised once per product, read by every worker
thread_local bool int8_decode = false;

}  // namespace

Int8Decode::Int8Decode() : prev_(int8_decode) { int8_decode = true; }
Int8Decode::~Int8Decode() { int8_decode = prev_; }
bool Int8Decode::active() { return int8_decode; }

// A multiple of 16 rows, the sgemm micro-tile that split_rows (blas_threads.h) also cuts at.
int64_t qmatmul_tile_rows(int64_t cols) {
  return std::max<int64_t>(16, kTileFloats / std::max<int64_t>(1, cols) / 16 * 16);
}

void matmul_nt(const float* x, const WeightView& w, float* y, int m, bool accumulate) {
  check(w.rows >= 0 && w.cols >= 0 && m >= 0, "matmul_nt: bad shape m={} rows={} cols={}", m, w.rows, w.cols);
  const int n = static_cast<int>(w.rows), k = static_cast<int>(w.cols);
  if (w.type == DType::F32) return matmul_nt(x, static_cast<const float*>(w.data), y, m, n, k, accumulate);
  if (m == 0 || n == 0) return;
  if (m == 1 && int8_decode && q8_block(w.type)) {  // decode: integer dots on x quantised once
    const Q8Row xq = x_q8.quantize(x, k, q8_block(w.type));
    const auto dot = kernels::active_kernels().dot_row_q8;  // qdot_int8.h's dot_row_q8, per row
    const size_t row_bytes = w.row_bytes();
    parallel_for(static_cast<size_t>(n), [&](size_t b, size_t e) {
      for (size_t r = b; r < e; ++r) {
        const float s = dot(w.type, w.row(0) + r * row_bytes, xq);
        y[r] = accumulate ? y[r] + s : s;
      }
    }, 16);
    return;
  }
  if (m == 1) {  // one row: every weight byte read once, straight from the packed blocks
    parallel_for(static_cast<size_t>(n), [&](size_t b, size_t e) {
      for (size_t r = b; r < e; ++r) {
        const float s = dot_row(w.type, w.row(static_cast<int64_t>(r)), x, k);
        y[r] = accumulate ? y[r] + s : s;
      }
    }, 16);
    return;
  }
  // Each thread dequantises its own rows a tile at a time into its own buffer and multiplies
  // them at once (BLAS single-threaded): no barrier between dequantisation and sgemm.
  const size_t blocks_per_row = static_cast<size_t>(k) / dtype_block(w.type);
  kernels::split_rows(n, [&](int64_t r_begin, int64_t r_end) {
    const int64_t tile = std::min<int64_t>(r_end - r_begin, qmatmul_tile_rows(k));
    std::vector<float>& buf = tile_buf;
    if (buf.size() < static_cast<size_t>(tile * k)) buf.resize(static_cast<size_t>(tile * k));
    for (int64_t r0 = r_begin; r0 < r_end; r0 += tile) {
      const int64_t tr = std::min<int64_t>(tile, r_end - r0);
      for (int64_t r = 0; r < tr; ++r) dequant_blocks_fast(w.type, w.row(r0 + r), buf.data() + r * k, blocks_per_row);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, static_cast<int>(tr), k, 1.0f, x, k, buf.data(), k,
                  accumulate ? 1.0f : 0.0f, y + r0, n);
    }
  });
}

void matmul_nt_reference(const float* x, const WeightView& w, float* y, int m) {
  for (int64_t r = 0; r < w.rows; ++r)
    for (int i = 0; i < m; ++i)
      y[static_cast<int64_t>(i) * w.rows + r] =
          static_cast<float>(dot_row_reference(w.type, w.row(r), x + static_cast<int64_t>(i) * w.cols, w.cols));
}

void get_row(const WeightView& w, int64_t r, float* out) {
  check(r >= 0 && r < w.rows, "get_row: row {} outside [0, {})", r, w.rows);
  dequant_blocks_fast(w.type, w.row(r), out, static_cast<size_t>(w.cols) / dtype_block(w.type));
}

}  // namespace bosch
