// The quantised kernels against their plain references: dot_row (decode, packed blocks, AVX2
// where built) vs dot_row_reference (dequantise, sum in double); the tiled prefill matmul and
// the one-row path vs matmul_nt_reference; get_row vs to_f32. Random blocks of every type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "formats/dtype.h"
#include "formats/quant.h"
#include "kernels/ops.h"
#include "kernels/dispatch.h"
#include "kernels/qdot.h"
#include "kernels/qdot_int8.h"
#include "kernels/qmatmul.h"
#include "use_kernel_set.h"
#include "util/error.h"
#include "util/parallel.h"

using namespace bosch;

namespace {

const DType kTypes[] = {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0,
                        DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

void put_half(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// rows x cols of type t: random bytes, with every scale field set to a sane fp16 value.
std::vector<uint8_t> random_matrix(DType t, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint8_t> b(dtype_bytes(t, static_cast<size_t>(rows * cols)));
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) {
    std::vector<float> f(static_cast<size_t>(rows * cols));
    for (float& x : f) x = u(rng);
    for (size_t i = 0; i < f.size(); ++i) {
      if (t == DType::F32) std::memcpy(&b[4 * i], &f[i], 4);
      const uint16_t h = t == DType::F16 ? f32_to_f16(f[i]) : f32_to_bf16(f[i]);
      if (t != DType::F32) std::memcpy(&b[2 * i], &h, 2);
    }
    return b;
  }
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  const size_t bb = dtype_block_bytes(t);
  for (size_t off = 0; off < b.size(); off += bb) {
    switch (t) {
      case DType::Q4_K: case DType::Q5_K:
        put_half(&b[off], 0.01f * u(rng));
        put_half(&b[off + 2], 0.01f * u(rng));
        break;
      case DType::Q6_K: put_half(&b[off + 208], 0.01f * u(rng)); break;
      default: put_half(&b[off], 0.05f * u(rng)); break;
    }
  }
  return b;
}

std::vector<float> random_x(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = u(rng);
  return x;
}

// Float rounding bound of a k-term dot product: relative to sum |w x|.
double abs_dot(const WeightView& w, int64_t r, const float* x) {
  std::vector<float> row(static_cast<size_t>(w.cols));
  get_row(w, r, row.data());
  double s = 0;
  for (int64_t i = 0; i < w.cols; ++i) s += std::fabs(static_cast<double>(row[i]) * x[i]);
  return s;
}

// Column counts the prefill tests use per type: whole blocks, and odd ones where a block is 1.
std::vector<int64_t> prefill_cols(DType t) {
  return dtype_block(t) == 1 ? std::vector<int64_t>{1001, 5} : dtype_block(t) == 32 ? std::vector<int64_t>{544}
                                                                                      : std::vector<int64_t>{768};
}

// got = x[m, k] * W^T has the same bits for tokens 7 and 8 alone and on one thread.
void expect_bits_independent_of_tokens_and_threads(const std::vector<float>& x, const WeightView& w,
                                                    const std::vector<float>& got, int m) {
  const int64_t n = w.rows, k = w.cols;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> two(static_cast<size_t>(2 * n), nan), one_thread(got.size(), nan);
  matmul_nt(x.data() + 7 * k, w, two.data(), 2);  // tokens 7 and 8 alone
  ASSERT_EQ(std::memcmp(two.data(), got.data() + 7 * n, two.size() * 4), 0);
  const int threads = num_threads();
  set_num_threads(1);
  matmul_nt(x.data(), w, one_thread.data(), m);
  set_num_threads(threads);
  ASSERT_EQ(std::memcmp(one_thread.data(), got.data(), got.size() * 4), 0);
}

}  // namespace

TEST(QDot, FastEqualsScalarReferenceForEveryType) {
  std::printf("kernels: %s\n", bosch::kernels::kernels_description().c_str());
  for (DType t : kTypes) {
    SCOPED_TRACE(dtype_name(t));
    const int64_t k = dtype_block(t) == 1 ? 1000 : 1024;  // 1000: the F32/F16/BF16 tail path
    const auto bytes = random_matrix(t, 8, k, 7);
    const WeightView w{t, bytes.data(), 8, k};
    const auto x = random_x(static_cast<size_t>(k), 8);
    for (int64_t r = 0; r < 8; ++r) {
      const double want = dot_row_reference(t, w.row(r), x.data(), k);
      const double got = dot_row(t, w.row(r), x.data(), k);
      EXPECT_NEAR(got, want, 1e-6 * abs_dot(w, r, x.data()) + 1e-7) << "row " << r;
    }
  }
}

TEST(QMatmul, DecodeAndTiledPrefillEqualReference) {
  for (DType t : kTypes) {
    SCOPED_TRACE(dtype_name(t));
    const int64_t k = 256, n = qmatmul_tile_rows(k) + 37;  // crosses a tile boundary
    const auto bytes = random_matrix(t, n, k, 11);
    const WeightView w{t, bytes.data(), n, k};
    for (int m : {1, 3}) {
      SCOPED_TRACE(m);
      const auto x = random_x(static_cast<size_t>(m * k), 12);
      std::vector<float> want(static_cast<size_t>(m * n)), got(want.size()), acc(want.size(), 0.5f);
      matmul_nt_reference(x.data(), w, want.data(), m);
      matmul_nt(x.data(), w, got.data(), m);
      matmul_nt(x.data(), w, acc.data(), m, /*accumulate=*/true);
      for (int i = 0; i < m; ++i)
        for (int64_t r = 0; r < n; r += 97) {
          const size_t j = static_cast<size_t>(i * n + r);
          const double tol = 1e-6 * abs_dot(w, r, x.data() + i * k) + 1e-7;
          ASSERT_NEAR(got[j], want[j], tol) << "row " << i << " col " << r;
          ASSERT_NEAR(acc[j], want[j] + 0.5, tol + 1e-7) << "row " << i << " col " << r;
        }
      for (int i = 0; i < m; ++i)  // the last rows (second tile) too
        ASSERT_NEAR(got[static_cast<size_t>(i * n + n - 1)], want[static_cast<size_t>(i * n + n - 1)],
                    1e-6 * abs_dot(w, n - 1, x.data() + i * k) + 1e-7);
    }
  }
}

// The prefill product (gemm_kernels.h) under every kernel set this CPU runs, against the double
// reference on every output: rows across a partial panel and a 4-panel block (165), columns
// across 256-column blocks with tails no vector covers (F16/BF16: 1001 and 5), tokens across
// the micro-kernel's groups (12 with AVX-512, 6 with AVX2), with and without accumulate (y
// starts as NaN without it: nothing may be read from it). The same bits for any m >= 2 and any
// thread count: each output's sum runs over k in the same order.
TEST(QMatmul, PrefillProductEqualsReferenceForEveryTypeAndSet) {
  for (const kernels::KernelSet* s : kernels::compiled_kernel_sets()) {
    if (!kernels::cpu_runs(*s)) {
      std::printf("SKIPPED kernel set %s: this CPU lacks %s\n", s->name, s->features);
      continue;
    }
    tests::UseSet use(*s);
    for (DType t : kTypes) {
      if (t == DType::F32) continue;  // BLAS
      for (int64_t k : prefill_cols(t)) {
        SCOPED_TRACE(std::string(s->name) + " " + dtype_name(t) + " k=" + std::to_string(k));
        const int64_t n = 165;
        const auto bytes = random_matrix(t, n, k, 31);
        const WeightView w{t, bytes.data(), n, k};
        const int m = 25;
        const auto x = random_x(static_cast<size_t>(m * k), 32);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> want(static_cast<size_t>(m * n)), got(want.size(), nan), acc(want.size(), 0.5f);
        matmul_nt_reference(x.data(), w, want.data(), m);
        matmul_nt(x.data(), w, got.data(), m);
        matmul_nt(x.data(), w, acc.data(), m, /*accumulate=*/true);
        for (int i = 0; i < m; ++i)
          for (int64_t r = 0; r < n; ++r) {
            const size_t j = static_cast<size_t>(i * n + r);
            const double tol = 1e-6 * abs_dot(w, r, x.data() + i * k) + 1e-7;
            ASSERT_NEAR(got[j], want[j], tol) << "token " << i << " row " << r;
            ASSERT_NEAR(acc[j], want[j] + 0.5, tol + 1e-7) << "token " << i << " row " << r;
          }
        ASSERT_NO_FATAL_FAILURE(expect_bits_independent_of_tokens_and_threads(x, w, got, m));
      }
    }
  }
}

// BOSCH_PRECISION=bf16 (gemm_bf16_kernels.h): against a reference that rounds x and the
// dequantised weights to bf16 and sums in double (float32 accumulation error only), against the
// float32 reference within the two roundings (unit roundoff 2^-8 each: 2^-7 of sum |w x|), and bit-identical
// whatever the token count or the thread count.
TEST(QMatmul, Bf16PrefillEqualsItsReferenceForEveryType) {
  if (!tests::cpu_runs_bf16_prefill()) GTEST_SKIP() << "this CPU lacks AVX512_BF16 (the bf16 prefill is built, not run)";
  tests::UseSet use(kernels::avx512_kernel_set());
  tests::UsePrecision bf16(kernels::Precision::bf16);
  ASSERT_NE(kernels::bf16_prefill(), nullptr);
  auto round = [](float v) { return bf16_to_f32(f32_to_bf16(v)); };
  for (DType t : kTypes)
    for (int64_t k : prefill_cols(t)) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " k=" + std::to_string(k));
      const int64_t n = 165;
      const auto bytes = random_matrix(t, n, k, 41);
      const WeightView w{t, bytes.data(), n, k};
      const int m = 25;
      const auto x = random_x(static_cast<size_t>(m * k), 42);
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> f32(static_cast<size_t>(m * n)), got(f32.size(), nan), acc(f32.size(), 0.5f);
      matmul_nt_reference(x.data(), w, f32.data(), m);
      matmul_nt(x.data(), w, got.data(), m);
      matmul_nt(x.data(), w, acc.data(), m, /*accumulate=*/true);
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t r = 0; r < n; ++r) {
        get_row(w, r, row.data());
        for (int i = 0; i < m; ++i) {
          double want = 0, mag = 0;
          for (int64_t l = 0; l < k; ++l) {
            want += static_cast<double>(round(row[l])) * round(x[i * k + l]);
            mag += std::fabs(static_cast<double>(row[l]) * x[i * k + l]);
          }
          const size_t j = static_cast<size_t>(i * n + r);
          ASSERT_NEAR(got[j], want, 1e-6 * mag + 1e-7) << "token " << i << " row " << r;
          ASSERT_NEAR(acc[j], want + 0.5, 1e-6 * mag + 2e-7) << "token " << i << " row " << r;
          ASSERT_NEAR(got[j], f32[j], std::ldexp(mag, -7) + 1e-7) << "token " << i << " row " << r;
        }
      }
      ASSERT_NO_FATAL_FAILURE(expect_bits_independent_of_tokens_and_threads(x, w, got, m));
      // Products sharing x (q/k/v, gate/up) round x once: the same bits as one at a time.
      std::vector<float> s1(got.size(), nan), s2(got.size(), nan);
      matmul_nt_shared_x(x.data(), {{w, s1.data()}, {w, s2.data()}}, m);
      ASSERT_EQ(std::memcmp(s1.data(), got.data(), got.size() * 4), 0);
      ASSERT_EQ(std::memcmp(s2.data(), got.data(), got.size() * 4), 0);
    }
}

TEST(QMatmul, GetRowIsTheDequantisedRow) {
  for (DType t : kTypes) {
    SCOPED_TRACE(dtype_name(t));
    const int64_t k = 512;
    const auto bytes = random_matrix(t, 5, k, 3);
    const WeightView w{t, bytes.data(), 5, k};
    std::vector<float> all(static_cast<size_t>(5 * k)), row(static_cast<size_t>(k));
    to_f32(t, bytes.data(), all.data(), all.size());
    get_row(w, 3, row.data());
    EXPECT_EQ(std::memcmp(row.data(), all.data() + 3 * k, row.size() * 4), 0);
  }
}

// Inside an Int8Decode a one-row product on quantised weights is the integer kernel on x quantised
// once (bit for bit), on BF16 weights (with AVX512_BF16) the bf16-x kernel on x rounded once;
// outside it, and for more rows or F16 weights, the float paths are unchanged.
TEST(QMatmul, Int8DecodeOnlyForOneRowOfQuantisedWeights) {
  for (DType t : kTypes) {
    if (t == DType::F32) continue;  // BLAS, covered below
    SCOPED_TRACE(dtype_name(t));
    const int64_t k = 512, n = 70;
    const auto bytes = random_matrix(t, n, k, 13);
    const WeightView w{t, bytes.data(), n, k};
    const auto x = random_x(static_cast<size_t>(2 * k), 14);
    // [0, n): one row of x; [n, 3n): two rows (the prefill path)
    std::vector<float> plain(static_cast<size_t>(3 * n)), dec(plain.size()), acc(static_cast<size_t>(n), 0.25f);
    matmul_nt(x.data(), w, plain.data(), 1);
    matmul_nt(x.data(), w, plain.data() + n, 2);
    {
      Int8Decode scope;
      EXPECT_TRUE(Int8Decode::active());
      matmul_nt(x.data(), w, dec.data(), 1);
      matmul_nt(x.data(), w, acc.data(), 1, /*accumulate=*/true);
      matmul_nt(x.data(), w, dec.data() + n, 2);
    }
    EXPECT_FALSE(Int8Decode::active());
    Q8Buffer buf;
    for (int64_t r = 0; r < n; ++r) {
      const float want = dot_row(t, w.row(r), x.data(), k);
      ASSERT_EQ(plain[r], want) << r;
      ASSERT_EQ(dec[n + r], plain[n + r]) << r;
      ASSERT_EQ(dec[2 * n + r], plain[2 * n + r]) << r;
      if (t == DType::BF16 && kernels::bf16_x_dot()) {
        std::vector<uint16_t> xb(static_cast<size_t>(k));
        for (int64_t j = 0; j < k; ++j) xb[static_cast<size_t>(j)] = f32_to_bf16(x[static_cast<size_t>(j)]);
        ASSERT_EQ(dec[r], kernels::bf16_x_dot()(w.row(r), xb.data(), k)) << r;
        ASSERT_EQ(acc[r], 0.25f + dec[r]) << r;
        continue;
      }
      if (q8_block(t) == 0) {
        ASSERT_EQ(dec[r], want) << r;
        continue;
      }
      const Q8Row xq = buf.quantize(x.data(), k, q8_block(t));
      ASSERT_EQ(dec[r], dot_row_q8(t, w.row(r), xq)) << r;
      ASSERT_EQ(acc[r], 0.25f + dec[r]) << r;
    }
  }
}

// Decode's software prefetch only asks for cache lines: every decode product, int8 x, bf16 x and
// float x, is bit for bit the same with it on and off; BOSCH_PREFETCH takes 0 or 1 only.
TEST(QMatmul, DecodePrefetchChangesNoResult) {
  const int before = kernels::decode_prefetch_bytes;
  for (DType t : kTypes) {
    if (t == DType::F32) continue;  // BLAS
    SCOPED_TRACE(dtype_name(t));
    const int64_t k = 1024, n = 37;  // rows of 1-4 KiB: the prefetch runs past row and matrix ends
    const auto bytes = random_matrix(t, n, k, 21);
    const WeightView w{t, bytes.data(), n, k};
    const auto x = random_x(static_cast<size_t>(k), 22);
    std::vector<float> on(static_cast<size_t>(2 * n)), off(on.size());
    for (bool prefetch : {true, false}) {
      kernels::set_decode_prefetch(prefetch);
      EXPECT_EQ(kernels::decode_prefetch_bytes, prefetch ? kernels::kDecodePrefetchBytes : 0);
      float* y = prefetch ? on.data() : off.data();
      matmul_nt(x.data(), w, y, 1);  // float x
      Int8Decode scope;
      matmul_nt(x.data(), w, y + n, 1);  // decode's x: int8, bf16 or float by type
    }
    for (size_t i = 0; i < on.size(); ++i) ASSERT_EQ(on[i], off[i]) << i;
  }
  kernels::decode_prefetch_bytes = before;
  EXPECT_TRUE(kernels::parse_prefetch_setting("1"));
  EXPECT_FALSE(kernels::parse_prefetch_setting("0"));
  try {
    kernels::parse_prefetch_setting("yes");
    FAIL() << "BOSCH_PREFETCH=yes accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("BOSCH_PREFETCH"), std::string::npos) << e.what();
  }
}

// F32 weights take the float BLAS path unchanged: bit-identical results.
TEST(QMatmul, F32ViewIsTheFloatMatmul) {
  const int64_t k = 96, n = 40;
  const auto w = random_x(static_cast<size_t>(n * k), 5);
  const WeightView v{DType::F32, w.data(), n, k};
  for (int m : {1, 4}) {
    const auto x = random_x(static_cast<size_t>(m * k), 6);
    std::vector<float> a(static_cast<size_t>(m * n)), b(a.size());
    matmul_nt(x.data(), w.data(), a.data(), m, static_cast<int>(n), static_cast<int>(k));
    matmul_nt(x.data(), v, b.data(), m);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
  }
}

// Products that share x (q, k, v; gate, up) give each matrix's own matmul_nt bits: fused in one
// parallel section for one row (types with one x block: Q4_K with Q6_K, whose rows differ in
// bytes, so the byte-balanced split cuts inside a product; BF16 with F16), one after another
// otherwise (Q8_0's x block with Q4_K's, F32, several rows). Row counts that are not multiples
// of the split, at 1 to 3 threads.
TEST(QMatmul, SharedXProductsEqualSeparateProducts) {
  const int64_t k = 512;
  const std::pair<DType, DType> pairs[] = {{DType::Q4_K, DType::Q6_K}, {DType::BF16, DType::F16},
                                           {DType::Q8_0, DType::Q4_K}, {DType::F32, DType::Q8_0},
                                           {DType::Q5_0, DType::Q4_0}};
  const int prev_threads = num_threads();
  for (const auto& [ta, tb] : pairs)
    for (int threads : {1, 2, 3})
      for (bool int8 : {false, true})
        for (int m : {1, 3}) {
          SCOPED_TRACE(std::string(dtype_name(ta)) + "+" + dtype_name(tb) + " threads " + std::to_string(threads) +
                       (int8 ? " int8" : " float") + " m " + std::to_string(m));
          set_num_threads(threads);
          const int64_t na = 37, nb = 70;
          const auto ba = random_matrix(ta, na, k, 21), bb = random_matrix(tb, nb, k, 22);
          const WeightView wa{ta, ba.data(), na, k}, wb{tb, bb.data(), nb, k};
          const auto x = random_x(static_cast<size_t>(m * k), 23);
          std::vector<float> ya(static_cast<size_t>(m * na)), yb(static_cast<size_t>(m * nb));
          std::vector<float> sa(ya.size(), -1.0f), sb(yb.size(), -1.0f), sc(ya.size(), -1.0f);
          std::optional<Int8Decode> scope;
          if (int8) scope.emplace();
          matmul_nt(x.data(), wa, ya.data(), m);
          matmul_nt(x.data(), wb, yb.data(), m);
          matmul_nt_shared_x(x.data(), {{wa, sa.data()}, {wb, sb.data()}, {wa, sc.data()}}, m);
          EXPECT_EQ(std::memcmp(ya.data(), sa.data(), ya.size() * 4), 0);
          EXPECT_EQ(std::memcmp(ya.data(), sc.data(), ya.size() * 4), 0);
          EXPECT_EQ(std::memcmp(yb.data(), sb.data(), yb.size() * 4), 0);
        }
  set_num_threads(prev_threads);
}

TEST(QMatmul, SharedXProductsNeedOneColumnCount) {
  const auto a = random_matrix(DType::Q8_0, 4, 64, 1), b = random_matrix(DType::Q8_0, 4, 96, 2);
  const WeightView wa{DType::Q8_0, a.data(), 4, 64}, wb{DType::Q8_0, b.data(), 4, 96};
  std::vector<float> x(96), ya(4), yb(4);
  EXPECT_THROW(matmul_nt_shared_x(x.data(), {{wa, ya.data()}, {wb, yb.data()}}, 1), Error);
}
