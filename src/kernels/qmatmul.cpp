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
thread_local std::vector<uint16_t> x_bf16;  // decode on BF16 weights: x rounded once per product
thread_local bool int8_decode = false;

}  // namespace

Int8Decode::Int8Decode() : prev_(int8_decode) { int8_decode = true; }
Int8Decode::~Int8Decode() { int8_decode = prev_; }
bool Int8Decode::active() { return int8_decode; }

// A multiple of 16 rows, the sgemm micro-tile that split_rows (blas_threads.h) also cuts at.
int64_t qmatmul_tile_rows(int64_t cols) {
  return std::max<int64_t>(16, kTileFloats / std::max<int64_t>(1, cols) / 16 * 16);
}

namespace {

// One-row products y_i[r] (+)= dot(W_i row r, x) of products that share x and cols, in one
// parallel section over their rows. Inside an Int8Decode, weights with an 8-bit x block take
// x quantised once per block size (every product here has the same one, or this is not called).
void one_row_products(const float* x, const Product* ps, size_t np, bool accumulate) {
  const int64_t k = ps[0].w.cols;
  const int block = int8_decode ? q8_block(ps[0].w.type) : 0;
  Q8Row xq;
  if (block) xq = x_q8.quantize(x, k, block);
  const auto dot_q8 = kernels::active_kernels().dot_row_q8;  // qdot_int8.h's dot_row_q8, per row
  kernels::DotBf16x dot_bf16x = nullptr;  // BF16 weights: x in bf16 where the CPU has AVX512_BF16
  const uint16_t* xb = nullptr;           // (the workers' own x_bf16 is another thread_local)
  if (int8_decode && !block) {
    if (std::any_of(ps, ps + np, [](const Product& p) { return p.w.type == DType::BF16; }))
      dot_bf16x = kernels::bf16_x_dot();
    if (dot_bf16x) {
      x_bf16.resize(static_cast<size_t>(k));
      for (int64_t j = 0; j < k; ++j) x_bf16[static_cast<size_t>(j)] = f32_to_bf16(x[j]);
      xb = x_bf16.data();
    }
  }
  // Each thread takes an equal share of the weight bytes (rows of different types differ in
  // size), cut at row boundaries: rows [row_at(c), row_at(c + 1)) for chunk c.
  size_t total_rows = 0, total_bytes = 0;
  for (size_t i = 0; i < np; ++i) total_rows += static_cast<size_t>(ps[i].w.rows), total_bytes += ps[i].w.bytes();
  const size_t chunks = std::clamp<size_t>(total_rows / 16, 1, static_cast<size_t>(num_threads()));
  auto row_at = [&](size_t c) {  // the first row starting at or after byte total_bytes * c / chunks
    const size_t target = total_bytes / chunks * c + total_bytes % chunks * c / chunks;
    size_t first = 0, byte0 = 0;
    for (size_t i = 0; i < np; ++i) {
      const size_t rb = ps[i].w.row_bytes(), bytes = ps[i].w.bytes();
      if (target < byte0 + bytes) return first + (target - byte0 + rb - 1) / rb;
      first += static_cast<size_t>(ps[i].w.rows), byte0 += bytes;
    }
    return total_rows;
  };
  parallel_for(chunks, [&](size_t cb, size_t ce) {
    size_t b = row_at(cb);
    const size_t e = row_at(ce);
    size_t first = 0;  // rows of the products before ps[i]
    for (size_t i = 0; i < np && b < e; first += static_cast<size_t>(ps[i].w.rows), ++i) {
      const WeightView& w = ps[i].w;
      const size_t end = first + static_cast<size_t>(w.rows);
      if (b >= end) continue;
      const size_t row_bytes = w.row_bytes();
      const uint8_t* base = w.row(0);
      float* y = ps[i].y;
      for (; b < std::min(e, end); ++b) {
        const size_t r = b - first;
        const uint8_t* row = base + r * row_bytes;
        const float s = block                                         ? dot_q8(w.type, row, xq)
                        : dot_bf16x && w.type == DType::BF16 ? dot_bf16x(row, xb, k)
                                                              : dot_row(w.type, row, x, k);
        y[r] = accumulate ? y[r] + s : s;
      }
    }
  });
}

// The 8-bit x block every product takes in decode (0: float x), or -1 when they differ.
int shared_block(const Product* ps, size_t np) {
  const int block = q8_block(ps[0].w.type);
  for (size_t i = 1; i < np; ++i)
    if (q8_block(ps[i].w.type) != block) return -1;
  return block;
}

}  // namespace

namespace {

thread_local std::vector<uint16_t> x_bf16_rows;  // bf16 prefill: x rounded once per product

// The bf16 prefill products (gemm_bf16_kernels.h): x rounded to bf16 once, by every thread on
// its share of the tokens (products that share x share it), then each thread its rows of each W.
void matmul_nt_bf16(const kernels::KernelSet& s, const float* x, const Product* ps, size_t np, int m,
                    bool accumulate) {
  const int64_t k = ps[0].w.cols, ld = k + (k & 1);
  std::vector<uint16_t>& xb = x_bf16_rows;
  xb.resize(static_cast<size_t>(m) * static_cast<size_t>(ld));
  uint16_t* xbp = xb.data();
  parallel_for(static_cast<size_t>(m), [&](size_t b, size_t e) {
    s.round_x_bf16(x + static_cast<int64_t>(b) * k, static_cast<int64_t>(e - b), k, xbp + static_cast<int64_t>(b) * ld);
  });
  for (size_t i = 0; i < np; ++i) {
    const WeightView& w = ps[i].w;
    const kernels::GemmArgs args{w.type, w.row(0), k, x, m, ps[i].y, w.rows, accumulate};
    kernels::split_rows(w.rows, [&](int64_t r_begin, int64_t r_end) { s.gemm_rows_bf16(args, xbp, ld, r_begin, r_end); });
  }
}

}  // namespace

void matmul_nt(const float* x, const WeightView& w, float* y, int m, bool accumulate) {
  check(w.rows >= 0 && w.cols >= 0 && m >= 0, "matmul_nt: bad shape m={} rows={} cols={}", m, w.rows, w.cols);
  const int n = static_cast<int>(w.rows), k = static_cast<int>(w.cols);
  if (m > 1 && n > 0 && k > 0)
    if (const kernels::KernelSet* s = kernels::bf16_prefill()) {
      const Product p{w, y};
      return matmul_nt_bf16(*s, x, &p, 1, m, accumulate);
    }
  if (w.type == DType::F32) return matmul_nt(x, static_cast<const float*>(w.data), y, m, n, k, accumulate);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // empty sums
    if (!accumulate) std::fill(y, y + int64_t{m} * n, 0.0f);
    return;
  }
  if (m == 1) {  // one row: every weight byte read once, straight from the packed blocks
    const Product p{w, y};
    return one_row_products(x, &p, 1, accumulate);
  }
  if (const auto gemm_rows = kernels::active_kernels().gemm_rows) {  // gemm_kernels.h
    const kernels::GemmArgs args{w.type, w.row(0), w.cols, x, m, y, w.rows, accumulate};
    kernels::split_rows(n, [&](int64_t r_begin, int64_t r_end) { gemm_rows(args, r_begin, r_end); });
    return;
  }
  // Without AVX2 each thread dequantises its own rows a tile at a time into its own buffer and
  // multiplies them at once (BLAS single-threaded): no barrier between dequantisation and sgemm.
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

void matmul_nt_shared_x(const float* x, std::initializer_list<Product> products, int m) {
  const Product* ps = products.begin();
  const size_t np = products.size();
  bool fuse = m == 1 && np > 1 && shared_block(ps, np) >= 0;
  for (size_t i = 0; i < np; ++i) {
    const WeightView& w = ps[i].w;
    check(w.rows >= 0 && w.cols == ps[0].w.cols, "matmul_nt_shared_x: product {} has {} columns, product 0 {}", i,
          w.cols, ps[0].w.cols);
    fuse = fuse && w.type != DType::F32;
  }
  if (!fuse) {
    const kernels::KernelSet* bf16 = m > 1 && ps[0].w.cols > 0 ? kernels::bf16_prefill() : nullptr;
    if (bf16) return matmul_nt_bf16(*bf16, x, ps, np, m, /*accumulate=*/false);  // x rounded once
    for (const Product& p : products) matmul_nt(x, p.w, p.y, m);
    return;
  }
  one_row_products(x, ps, np, /*accumulate=*/false);
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
