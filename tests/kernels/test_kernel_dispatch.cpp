// The run-time kernel choice (kernels/dispatch.h): each compiled set (avx2, avx512) equals the
// scalar references for every dispatched family (attention, decode dots float and int8,
// elementwise ops). The full suites (test_attention, test_qmatmul, test_ops) also run once per
// set (CMakeLists.txt); test_qdot_int8 tests each set itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formats/dtype.h"
#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "use_kernel_set.h"
#include "kernels/ops.h"
#include "kernels/qdot.h"
#include "kernels/qdot_int8.h"
#include "util/error.h"

using namespace bosch;
using bosch::tests::UseSet;

namespace {

std::vector<float> rnd(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

void check_families(const kernels::KernelSet& s) {
  UseSet use(s);
  ASSERT_STREQ(kernels::active_kernels().name, s.name);
  // Decode dot on random blocks with sane fp16 scales, every stored type.
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K,
                  DType::Q5_K, DType::Q6_K}) {
    SCOPED_TRACE(dtype_name(t));
    const int64_t k = dtype_block(t) == 1 ? 1000 : 1024;
    std::mt19937 rng(3);
    std::vector<uint8_t> row(dtype_bytes(t, k));
    if (dtype_is_quantized(t)) {
      for (uint8_t& b : row) b = static_cast<uint8_t>(rng());
      const size_t bb = dtype_block_bytes(t), at = t == DType::Q6_K ? 208 : 0;
      for (size_t off = 0; off < row.size(); off += bb) {
        const uint16_t h = f32_to_f16(0.01f), z = f32_to_f16(0.002f);
        std::memcpy(&row[off + at], &h, 2);
        if (t == DType::Q4_K || t == DType::Q5_K) std::memcpy(&row[off + 2], &z, 2);
      }
    } else {
      const auto f = rnd(static_cast<size_t>(k), 4);
      for (int64_t i = 0; i < k; ++i) {
        if (t == DType::F32) std::memcpy(&row[4 * i], &f[i], 4);
        const uint16_t h = t == DType::F16 ? f32_to_f16(f[i]) : f32_to_bf16(f[i]);
        if (t != DType::F32) std::memcpy(&row[2 * i], &h, 2);
      }
    }
    const auto x = rnd(static_cast<size_t>(k), 5);
    std::vector<float> w(static_cast<size_t>(k));
    dequant_blocks(t, row.data(), w.data(), static_cast<size_t>(k) / dtype_block(t));
    double mag = 0;
    for (int64_t i = 0; i < k; ++i) mag += std::fabs(double(w[i]) * x[i]);
    EXPECT_NEAR(dot_row(t, row.data(), x.data(), k), dot_row_reference(t, row.data(), x.data(), k), 1e-6 * mag + 1e-7);
    if (!q8_block(t)) continue;  // the integer decode dot (full checks: test_qdot_int8)
    Q8Buffer buf;
    const Q8Row xq = buf.quantize(x.data(), k, q8_block(t));
    double qmag = 0;
    const double want = dot_row_q8_reference(t, row.data(), xq, &qmag);
    EXPECT_NEAR(dot_row_q8(t, row.data(), xq), want, 1e-5 * qmag);
  }
  // Attention: prefill (lanes path), decode (row-major path), SWA with sinks, odd head_dim.
  struct Shape { int n_q; int64_t pos0; int heads, kv, hd, w, sinks; };
  for (Shape sh : {Shape{70, 0, 8, 2, 64, 0, 0}, Shape{1, 300, 16, 8, 128, 0, 0}, Shape{3, 200, 4, 1, 32, 50, 4},
                   Shape{130, 10, 6, 3, 48, 40, 8}}) {
    const int64_t npos = sh.pos0 + sh.n_q;
    const auto q = rnd(size_t(sh.n_q) * sh.heads * sh.hd, 6), k = rnd(size_t(npos) * sh.kv * sh.hd, 7),
               v = rnd(size_t(npos) * sh.kv * sh.hd, 8);
    std::vector<int32_t> win(sh.kv, sh.w), snk(sh.kv, sh.sinks);
    std::vector<float> got(q.size()), want(q.size());
    attention(dense_attention_args(q.data(), k.data(), v.data(), got.data(), sh.n_q, sh.pos0, sh.heads, sh.kv, sh.hd,
                                   win.data(), snk.data()));
    attention_reference(dense_attention_args(q.data(), k.data(), v.data(), want.data(), sh.n_q, sh.pos0, sh.heads,
                                             sh.kv, sh.hd, win.data(), snk.data()));
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5) << "n_q " << sh.n_q << " at " << i;
  }
  // Elementwise: RMSNorm, SwiGLU, softmax against their definitions.
  const int n = 1001;
  const auto xs = rnd(n, 9, -20, 20), ws = rnd(n, 10), ups = rnd(n, 11);
  std::vector<float> o(n);
  rmsnorm(xs.data(), ws.data(), o.data(), 1, n, 1e-6f);
  double ss = 0;
  for (float a : xs) ss += double(a) * a;
  const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
  for (int i = 0; i < n; ++i) ASSERT_NEAR(o[i], xs[i] * inv * ws[i], 1e-5 * std::fabs(xs[i] * inv) + 1e-6);
  swiglu(xs.data(), ups.data(), o.data(), n);
  for (int i = 0; i < n; ++i) {
    const double want = xs[i] / (1.0 + std::exp(-double(xs[i]))) * ups[i];
    ASSERT_NEAR(o[i], want, 1e-6 * std::fabs(want) + 1e-7);
  }
  auto p = xs;
  const double lse = softmax_inplace(p.data(), n);
  double mx = -INFINITY, den = 0;
  for (float a : xs) mx = std::max(mx, double(a));
  for (float a : xs) den += std::exp(a - mx);
  EXPECT_NEAR(lse, mx + std::log(den), 1e-6);
  for (int i = 0; i < n; ++i) ASSERT_NEAR(p[i], std::exp(xs[i] - mx) / den, 1e-6 * p[i] + 1e-12);
}

}  // namespace

TEST(KernelDispatch, Avx2SetEqualsScalarReferences) { check_families(kernels::avx2_kernel_set()); }

TEST(KernelDispatch, Avx512SetEqualsScalarReferences) {
  if (!kernels::cpu_runs(kernels::avx512_kernel_set()))
    GTEST_SKIP() << "this CPU lacks AVX-512 (" << kernels::avx512_kernel_set().features
                 << "): only the avx2 kernels were tested";
  check_families(kernels::avx512_kernel_set());
}

TEST(KernelDispatch, DefaultIsTheWidestSetThisCpuRuns) {
  const bool wide = kernels::cpu_runs(kernels::avx512_kernel_set());
  if (std::getenv("BOSCH_KERNELS")) GTEST_SKIP() << "BOSCH_KERNELS is set";
  EXPECT_STREQ(kernels::active_kernels().name, wide ? "avx512" : "avx2");
  EXPECT_NE(kernels::kernels_description().find(kernels::active_kernels().features), std::string::npos);
}

TEST(KernelDispatch, UnknownSetIsAClearError) {
  try {
    kernels::select_kernels("sse2");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("BOSCH_KERNELS=sse2: unknown kernel set, expected one of avx2, avx512"),
              std::string::npos) << e.what();
  }
}

// BF16 decode with x rounded to bf16 (AVX512_BF16 only): every product of two bf16 values is
// exact in float32, so the kernel must equal their sum up to float32 accumulation; and the
// rounding of x is round-to-nearest-even (f32_to_bf16).
TEST(KernelDispatch, Bf16xDotEqualsTheExactProducts) {
  const kernels::DotBf16x dot = kernels::bf16_x_dot();
  if (!dot) GTEST_SKIP() << "no AVX512_BF16 on this CPU (or BOSCH_KERNELS=avx2): BF16 decode keeps float32 x";
  std::mt19937 g(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int64_t k : {int64_t{1}, int64_t{63}, int64_t{64}, int64_t{100}, int64_t{4096}, int64_t{12288}}) {
    std::vector<uint16_t> w(static_cast<size_t>(k)), xb(static_cast<size_t>(k));
    for (auto& v : w) v = f32_to_bf16(nd(g));
    for (auto& v : xb) v = f32_to_bf16(nd(g) * 3.0f);
    double exact = 0, mag = 0;
    for (int64_t i = 0; i < k; ++i) {
      const double p = double(bf16_to_f32(w[static_cast<size_t>(i)])) * bf16_to_f32(xb[static_cast<size_t>(i)]);
      exact += p, mag += std::fabs(p);
    }
    const float got = dot(reinterpret_cast<const uint8_t*>(w.data()), xb.data(), k);
    EXPECT_NEAR(got, exact, 2e-6 * mag) << "k=" << k;
  }
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), f32_to_bf16(1.0f));              // a tie rounds to even (down)
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), f32_to_bf16(1.0f + 0x1p-6f));  // a tie rounds to even (up)
}

TEST(KernelDispatch, PrecisionNamesAndErrors) {
  EXPECT_EQ(kernels::parse_precision("f32"), kernels::Precision::f32);
  EXPECT_EQ(kernels::parse_precision("bf16"), kernels::Precision::bf16);
  for (const char* bad : {"int8", "fp32", ""}) {
    try {
      kernels::parse_precision(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("BOSCH_PRECISION"), std::string::npos) << e.what();
      if (std::string(bad) == "int8") {
        EXPECT_NE(std::string(e.what()).find("not built yet"), std::string::npos);
      }
    }
  }
  // Asked for where it cannot run (the avx2 set has no bf16 product): float32, with a note.
  tests::UseSet use(kernels::avx2_kernel_set());
  kernels::set_prefill_precision(kernels::Precision::bf16);
  EXPECT_EQ(kernels::bf16_prefill(), nullptr);
  EXPECT_NE(kernels::kernels_description().find("prefill f32"), std::string::npos) << kernels::kernels_description();
  kernels::set_prefill_precision(kernels::Precision::f32);
}
