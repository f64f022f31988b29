#include "kernels/dispatch.h"

#include <cblas.h>
#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "util/error.h"

namespace bosch::kernels {

namespace {

// OpenBLAS picks its kernels once, as it loads, from the CPU models it knows. Bookworm's 0.3.21
// does not know this project's current host (Xeon, family 6 model 207, AVX-512) and falls back
// to its SSE3 "Prescott" kernels: sgemm 34 GFLOP/s on 2 cores against 171 with its SkylakeX ones,
// so prefill and every search evaluation ran 5x slower. Where OpenBLAS chose a pre-AVX2 core on
// a CPU with AVX2 and FMA, and OPENBLAS_CORETYPE is unset, the process sets it (SkylakeX where
// the CPU has x86-64-v4's AVX-512, else Haswell) and starts again: OpenBLAS cannot choose twice
// in one process. Runs before main (and before MPI starts), in every binary that links this file.
bool blas_core_is_pre_avx2(const char* core) {
  for (const char* old : {"prescott", "core2", "penryn", "dunnington", "nehalem", "sandybridge", "atom", "katmai",
                          "coppermine", "northwood", "banias", "opteron", "opteron_sse3", "barcelona", "nano",
                          "bobcat", "bulldozer", "piledriver", "steamroller"})
    if (core && strcasecmp(core, old) == 0) return true;
  return false;
}

__attribute__((constructor)) void restart_with_a_known_blas_core() {
  if (std::getenv("OPENBLAS_CORETYPE") || !blas_core_is_pre_avx2(openblas_get_corename())) return;
  if (!cpu_runs(avx2_kernel_set())) return;  // the kernel sets are constinit: usable before main
  const bool v4 = cpu_runs(avx512_kernel_set());
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (cmdline.empty()) return;
  std::vector<char*> argv;
  for (size_t at = 0; at < cmdline.size();) {  // NUL-separated; c_str() ends the last one
    argv.push_back(const_cast<char*>(cmdline.c_str() + at));
    const size_t end = cmdline.find('\0', at);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  argv.push_back(nullptr);
  setenv("OPENBLAS_CORETYPE", v4 ? "SkylakeX" : "Haswell", 1);
  execv("/proc/self/exe", argv.data());
  unsetenv("OPENBLAS_CORETYPE");  // exec failed: go on with the kernels OpenBLAS chose
}

const KernelSet* pick_default() {
  if (const char* p = std::getenv("BOSCH_PREFETCH"); p && *p) set_decode_prefetch(parse_prefetch_setting(p));
  const char* env = std::getenv("BOSCH_KERNELS");
  if (env && *env) {
    select_kernels(env);
    return nullptr;  // select_kernels stored it
  }
  return cpu_runs(avx512_kernel_set()) ? &avx512_kernel_set() : &avx2_kernel_set();
}

std::atomic<const KernelSet*> g_active{nullptr};

}  // namespace

const char* blas_core_name() { return openblas_get_corename(); }

bool cpu_runs(const KernelSet& s) {
  __builtin_cpu_init();
  if (&s == &avx512_kernel_set())  // x86-64-v4; libgcc also checks that the OS saves zmm state
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512cd");
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

std::vector<const KernelSet*> compiled_kernel_sets() { return {&avx2_kernel_set(), &avx512_kernel_set()}; }

void select_kernels(std::string_view name) {
  std::string names;
  for (const KernelSet* s : compiled_kernel_sets()) {
    if (name == s->name) {
      check(cpu_runs(*s), "BOSCH_KERNELS={}: this CPU lacks {} (needs {})", name, s->name, s->features);
      g_active.store(s);
      return;
    }
    names += fmt::format("{}{}", names.empty() ? "" : ", ", s->name);
  }
  fail("BOSCH_KERNELS={}: unknown kernel set, expected one of {}", name, names);
}

const KernelSet& active_kernels() {
  const KernelSet* s = g_active.load(std::memory_order_acquire);
  if (s) return *s;
  static const bool once = [] {  // thread-safe one-time choice
    if (const KernelSet* d = pick_default()) g_active.store(d);
    return true;
  }();
  (void)once;
  return *g_active.load();
}

namespace {
std::atomic<int> g_precision{-1};  // -1: not read yet
bool cpu_has_bf16() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return has;
}
}  // namespace

DotBf16x bf16_x_dot() {
  const KernelSet& s = active_kernels();
  return cpu_has_bf16() ? s.dot_row_bf16x : nullptr;
}

Precision parse_precision(std::string_view v) {
  if (v == "f32") return Precision::f32;
  if (v == "bf16") return Precision::bf16;
  if (v == "int8")
    fail("BOSCH_PRECISION=int8: the int8 (VNNI/AMX) prefill path is not built yet (issue #44); expected f32 or bf16");
  fail("BOSCH_PRECISION={}: expected f32 (float32 products, the default) or bf16 (bfloat16 products)", v);
}

const char* precision_name(Precision p) { return p == Precision::bf16 ? "bf16" : "f32"; }

Precision requested_precision() {
  int p = g_precision.load(std::memory_order_acquire);
  if (p < 0) {
    const char* env = std::getenv("BOSCH_PRECISION");
    p = static_cast<int>(env && *env ? parse_precision(env) : Precision::f32);
    g_precision.store(p);
  }
  return static_cast<Precision>(p);
}

void set_prefill_precision(Precision p) { g_precision.store(static_cast<int>(p)); }

bool bf16_prefill_available() {
  const KernelSet& s = active_kernels();
  return cpu_has_bf16() && s.gemm_rows_bf16 && s.round_x_bf16;
}

const KernelSet* bf16_prefill() {
  if (requested_precision() != Precision::bf16) return nullptr;
  const KernelSet& s = active_kernels();
  if (cpu_has_bf16() && s.gemm_rows_bf16 && s.round_x_bf16) return &s;
  static std::atomic<bool> noted{false};
  if (!noted.exchange(true))
    fmt::print(stderr, "note: BOSCH_PRECISION=bf16 needs AVX512_BF16 and the avx512 kernel set ({}{}): "
                       "prefill runs in float32\n",
               cpu_has_bf16() ? "this CPU has it, the set in use is " : "this CPU lacks it",
               cpu_has_bf16() ? s.name : "");
  return nullptr;
}

void set_decode_prefetch(bool on) { decode_prefetch_bytes = on ? kDecodePrefetchBytes : 0; }

bool parse_prefetch_setting(std::string_view v) {
  check(v == "0" || v == "1", "BOSCH_PREFETCH: expected 0 (decode without software prefetch) or 1 (with it), found '{}'", v);
  return v == "1";
}

std::string kernels_description() {
  const KernelSet& s = active_kernels();
  const bool bf16 = requested_precision() == Precision::bf16 && cpu_has_bf16() && s.gemm_rows_bf16;
  return fmt::format("{} ({}){}{}; prefill {}; decode prefetch {}", s.name, s.features,
                     bf16_x_dot() ? "; BF16 decode: avx512bf16 dots, x rounded to bf16 as llama.cpp" : "",
                     std::getenv("BOSCH_KERNELS") ? ", forced by BOSCH_KERNELS" : "",
                     bf16 ? "bf16 (avx512bf16 vdpbf16ps, BOSCH_PRECISION=bf16)"
                          : requested_precision() == Precision::bf16 ? "f32 (bf16 asked for, not available here)"
                                                                     : "f32 (BOSCH_PRECISION=bf16 for bfloat16 products)",
                     decode_prefetch_bytes ? fmt::format("{} bytes ahead", decode_prefetch_bytes)
                                           : std::string("off (BOSCH_PREFETCH=0)"));
}

}  // namespace bosch::kernels
