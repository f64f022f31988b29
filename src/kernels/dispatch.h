// Run-time choice of the hot kernels' instruction set. The default build targets x86-64-v3
// (AVX2/FMA/F16C: any x86 CPU since 2015), so the binary can be copied; the kernels below are
// compiled a second time for AVX-512 (isa_avx512.cpp, -march=x86-64-v4) and the set that runs
// is chosen once, at first use, with __builtin_cpu_supports. BOSCH_KERNELS=avx2 (or avx512)
// in the environment forces a set (tests and benchmarks compare them).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/dtype.h"

namespace bosch {
struct AttentionArgs;
struct Q8Row;
}

namespace bosch::kernels {

struct AttentionLayout;  // kernels/attention_layout.h

// A prefill product on weights in their stored type: y[m, ldy] (+)= x[m, k] * W^T, W's rows
// packed back to back from w (qmatmul.cpp).
struct GemmArgs {
  DType type;
  const uint8_t* w;
  int64_t k;
  const float* x;
  int64_t m;
  float* y;
  int64_t ldy;
  bool accumulate;
};

// One function-pointer table per instruction set; one entry per dispatched kernel family.
struct KernelSet {
  const char* name = "";      // "avx2", "avx512"
  const char* features = "";  // the CPU features it needs, as `bosch info` prints them
  // attention.cpp: every work item of a validated layout
  void (*attention)(const AttentionArgs&, const AttentionLayout&) = nullptr;
  // qdot.cpp: one weight row in its stored type . x (decode)
  float (*dot_row)(DType, const uint8_t*, const float*, int64_t) = nullptr;
  // qdot_int8.cpp: the same with x quantised to 8 bits (integer dots)
  float (*dot_row_q8)(DType, const uint8_t*, const Q8Row&) = nullptr;
  // A BF16 row . x rounded to bf16 (vdpbf16ps); only the AVX-512 set has one, and it runs only
  // where the CPU also has AVX512_BF16: use bf16_x_dot(), not this field.
  float (*dot_row_bf16x)(const uint8_t* w, const uint16_t* xb, int64_t k) = nullptr;
  // dequant.cpp: whole blocks to float32 (prefill tiles), dequant_blocks' values
  void (*dequant)(DType, const uint8_t*, float*, size_t nblocks) = nullptr;
  // gemm_kernels.h: rows [r_begin, r_end) of a prefill product (null in a build without AVX2:
  // sgemm on dequantised tiles instead)
  void (*gemm_rows)(const GemmArgs&, int64_t r_begin, int64_t r_end) = nullptr;
  // gemm_bf16_kernels.h: the same with x and W rounded to bf16 (vdpbf16ps), x rounded once per
  // product (rows of k rounded up to even); only the AVX-512 set has them, and they run only
  // where the CPU also has AVX512_BF16: use bf16_prefill(), not these fields.
  void (*round_x_bf16)(const float* x, int64_t m, int64_t k, uint16_t* xb) = nullptr;
  void (*gemm_rows_bf16)(const GemmArgs&, const uint16_t* xb, int64_t ldxb, int64_t r_begin, int64_t r_end) = nullptr;
  // ops.cpp: elementwise kernels
  void (*rmsnorm_row)(const float* x, const float* weight, float* out, int dim, float eps) = nullptr;
  void (*swiglu)(const float* gate, const float* up, float* out, int64_t n) = nullptr;
  float (*max_of)(const float* x, int64_t n) = nullptr;
  double (*exp_shift_sum)(float* x, int64_t n, float shift) = nullptr;
};

// The set in use: BOSCH_KERNELS if set (an error names the variable when the value is unknown or
// this CPU lacks the set), else the widest set this CPU runs.
const KernelSet& active_kernels();
// Every set compiled in, narrowest first, and whether this CPU can run it.
std::vector<const KernelSet*> compiled_kernel_sets();
bool cpu_runs(const KernelSet& s);
// Replaces the active set (tests run every kernel under each set). Not thread-safe against
// kernels running at the same time.
void select_kernels(std::string_view name);
// One-token decode on BF16 weights with x rounded to bf16 once per product, as llama.cpp does
// (its vec_dot_type for BF16 is BF16): the active set's dot_row_bf16x where this CPU has
// AVX512_BF16, else nullptr (then x stays float32, dot_row).
using DotBf16x = float (*)(const uint8_t* w, const uint16_t* xb, int64_t k);
DotBf16x bf16_x_dot();

// The arithmetic of prefill products (every matmul of more than one row; decode keeps its own):
// f32 = float32 FMAs on the dequantised weights (the reference, and the default: every result
// in docs/ was made with it); bf16 = x and the weights rounded to bfloat16, products summed in
// float32 by vdpbf16ps (AVX512_BF16; twice the multiply-adds per instruction). Read from
// BOSCH_PRECISION at first use (beside BOSCH_KERNELS, which picks the instruction set). "int8"
// (VNNI/AMX) is not built yet: an error says so.
enum class Precision { f32, bf16 };
Precision parse_precision(std::string_view value);  // error names BOSCH_PRECISION
const char* precision_name(Precision p);
// The precision asked for (BOSCH_PRECISION, default f32), or the one set_prefill_precision set.
Precision requested_precision();
// Replaces it (tests, benches). Not thread-safe against kernels running at the same time.
void set_prefill_precision(Precision p);
// The active set when bf16 prefill was asked for and this CPU and set run it, else nullptr (a
// request this CPU cannot serve prints one note on stderr and runs float32).
const KernelSet* bf16_prefill();
// Whether bf16 prefill would run here (the active set and the CPU), whatever was asked for.
bool bf16_prefill_available();
// Decode's software prefetch: the dot kernels ask for the line this many bytes ahead of the one
// they read, 0 = none (the hardware prefetcher alone). Hosts differ: on this project's VM one
// host decoded 1.5-1.8x faster with it (8B Q8_0 0.54 -> 0.98 of the read bandwidth), an earlier
// one 1-10% slower. BOSCH_PREFETCH=0 turns it off, 1 (the default) on; read with the kernel
// set, at first use. `bosch bench qdot` prints both on the machine at hand.
inline constexpr int kDecodePrefetchBytes = 4096;
inline int decode_prefetch_bytes = kDecodePrefetchBytes;  // read by the kernels on every row
// Sets it (benches compare both). Not thread-safe against kernels running at the same time.
void set_decode_prefetch(bool on);
// BOSCH_PREFETCH's value: "1" on, "0" off, anything else an error naming the variable.
bool parse_prefetch_setting(std::string_view value);
// The kernel set OpenBLAS runs ("SkylakeX", "Haswell", ...). Where it chose a pre-AVX2 set on a
// CPU it does not know, dispatch.cpp restarts the process with OPENBLAS_CORETYPE set.
const char* blas_core_name();
// "avx512 (avx512f, avx512bw, ...)": what `bosch info` and the benches print (with the prefill
// precision in use).
std::string kernels_description();

// Defined in isa_avx2.cpp / isa_avx512.cpp.
const KernelSet& avx2_kernel_set();
const KernelSet& avx512_kernel_set();

}  // namespace bosch::kernels
