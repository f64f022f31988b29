// `bosch bench qdot`: the decode dot kernels alone. Per weight type, one matrix-vector product
// over a random matrix larger than the caches, with float x (qdot.h) and with x quantised to 8
// bits (qdot_int8.h, what decode runs); the weight bytes each reads per second beside the memory
// read bandwidth measured in the same run; then the same bytes as a chain of --split-kib products
// (a decode token's matrices are 1-30 MB: the start and hand-over of each product costs), beside
// the single product. Prints ratios, not a timed test.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "cli/bench/bandwidth.h"
#include "cli/command.h"
#include "kernels/dispatch.h"
#include "kernels/qdot_int8.h"
#include "kernels/qmatmul.h"
#include "util/error.h"
#include "util/parallel.h"

namespace bosch::cli {
namespace {

struct QdotOptions {
  int mib = 256, cols = 2048, repeats = 5;
  int split_kib = 1024;  // decode-shaped: the same bytes as a chain of products of this size
};

// Random quant bytes; every fp16 scale set to a small value (the speed does not depend on them).
std::vector<uint8_t> random_matrix(DType t, int64_t rows, int64_t cols) {
  std::mt19937 rng(1);
  std::vector<uint8_t> b(dtype_bytes(t, static_cast<size_t>(rows * cols)));
  for (uint8_t& v : b) v = static_cast<uint8_t>(rng());
  const size_t bb = dtype_block_bytes(t), at = t == DType::Q6_K ? 208 : 0;
  const uint16_t h = f32_to_f16(0.01f);
  if (dtype_is_quantized(t))
    for (size_t off = 0; off < b.size(); off += bb) {
      std::memcpy(&b[off + at], &h, 2);
      if (t == DType::Q4_K || t == DType::Q5_K) std::memcpy(&b[off + 2], &h, 2);
    }
  else  // F16/BF16: the same small value everywhere
    for (size_t off = 0; off < b.size(); off += 2) std::memcpy(&b[off], &h, 2);
  return b;
}

// Best seconds of `repeats` passes over the views, one product each (the first pass untimed:
// page faults). One view: a single large product; many: the chain of small products a decode
// token runs, with the pool spinning between them as in Model::forward_next.
double best_time(const QdotOptions& o, const float* x, const std::vector<WeightView>& views, float* y) {
  SpinningPool spin;
  auto pass = [&] {
    for (const WeightView& w : views) matmul_nt(x, w, y, 1);
  };
  pass();
  double best = 1e30;
  for (int r = 0; r < o.repeats; ++r) {
    const double t0 = now_s();
    pass();
    best = std::min(best, now_s() - t0);
  }
  return best;
}

// The matrix cut into consecutive row ranges of about `kib` KiB (at least 16 rows each).
std::vector<WeightView> cut(const WeightView& w, int kib) {
  const int64_t rows = std::max<int64_t>(16, (int64_t{kib} << 10) / static_cast<int64_t>(w.row_bytes()));
  std::vector<WeightView> out;
  for (int64_t r = 0; r < w.rows; r += rows) out.push_back({w.type, w.row(r), std::min(rows, w.rows - r), w.cols});
  return out;
}

void run(const QdotOptions& o) {
  fmt::print("kernels: {}, {} threads; {} MiB per matrix, {} columns, best of {}\n\n", kernels::kernels_description(),
             num_threads(), o.mib, o.cols, o.repeats);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<size_t>(o.cols));
  for (float& v : x) v = u(rng);
  struct Row { DType t; double f, q, chain, no_prefetch; };
  std::vector<Row> rows;
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::F16, DType::BF16}) {
    const int64_t n = std::max<int64_t>(1, (int64_t{o.mib} << 20) / static_cast<int64_t>(dtype_bytes(t, o.cols)));
    const auto bytes = random_matrix(t, n, o.cols);
    const WeightView w{t, bytes.data(), n, o.cols};
    std::vector<float> y(static_cast<size_t>(n));
    const double gb = static_cast<double>(w.bytes()) / 1e9;
    const double f = gb / best_time(o, x.data(), {w}, y.data());
    double q = 0, chain = 0, no_prefetch = 0;
    {
      std::optional<Int8Decode> decode;  // what decode runs for this type, for both timings
      if (q8_block(t) || (t == DType::BF16 && kernels::bf16_x_dot())) {  // int8 x; bf16 x
        decode.emplace();
        q = gb / best_time(o, x.data(), {w}, y.data());
      }
      chain = gb / best_time(o, x.data(), cut(w, o.split_kib), y.data());
      // decode's path again without software prefetch (the hardware prefetcher alone)
      const int prefetch = kernels::decode_prefetch_bytes;
      kernels::set_decode_prefetch(false);
      no_prefetch = gb / best_time(o, x.data(), {w}, y.data());
      kernels::decode_prefetch_bytes = prefetch;
    }
    rows.push_back({t, f, q, chain, no_prefetch});
  }
  const double bw = read_bandwidth_gbs(std::max(o.mib * 2, 256));
  fmt::print("| type | float x: GB/s | decode x (int8; BF16: bf16): GB/s | decode / float | decode / bandwidth | {} KiB products: GB/s | small / one "
             "| decode without prefetch: GB/s | with / without |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", o.split_kib);
  for (const Row& r : rows) {
    const double dec = r.q > 0 ? r.q : r.f;  // what decode runs
    fmt::print("| {} | {:.2f} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", dtype_name(r.t), r.f,
               r.q > 0 ? fmt::format("{:.2f}", r.q) : "-", r.q > 0 ? fmt::format("{:.2f}", r.q / r.f) : "-", dec / bw,
               r.chain, r.chain / dec, r.no_prefetch, dec / r.no_prefetch);
  }
  fmt::print("\nmemory read bandwidth (measured now, {} MiB): {:.2f} GB/s\n", std::max(o.mib * 2, 256), bw);
}

BenchRegistrar reg("qdot", "decode dot kernels per weight type: float vs decode x (int8; bf16), weight GB/s vs memory bandwidth",
                   [](CLI::App& app) {
  auto o = std::make_shared<QdotOptions>();
  add_opt(app, "--mib", o->mib, "bytes of each weight matrix (larger than the caches)")->check(CLI::Range(1, 1 << 14));
  add_opt(app, "--cols", o->cols, "row length (a multiple of 256)")->check(CLI::Range(256, 1 << 16));
  add_opt(app, "--split-kib", o->split_kib,
                 "also the same bytes as a chain of products of this size, as a decode token runs them")
      ->check(CLI::Range(16, 1 << 20));
  add_opt(app, "--repeats", o->repeats, "timed products per path; the best counts")->check(CLI::Range(1, 1000));
  app.callback([o] {
    check(o->cols % 256 == 0, "bench qdot: --cols {} is not a multiple of 256", o->cols);
    run(*o);
  });
});

}  // namespace
}  // namespace bosch::cli
