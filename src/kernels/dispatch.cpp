#include "kernels/dispatch.h"

#include <atomic>
#include <cstdlib>

#include "util/error.h"

namespace bosch::kernels {

namespace {

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

DotBf16x bf16_x_dot() {
  static const bool cpu_bf16 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  const KernelSet& s = active_kernels();
  return cpu_bf16 ? s.dot_row_bf16x : nullptr;
}

void set_decode_prefetch(bool on) { decode_prefetch_bytes = on ? kDecodePrefetchBytes : 0; }

bool parse_prefetch_setting(std::string_view v) {
  check(v == "0" || v == "1", "BOSCH_PREFETCH: expected 0 (decode without software prefetch) or 1 (with it), found '{}'", v);
  return v == "1";
}

std::string kernels_description() {
  const KernelSet& s = active_kernels();
  return fmt::format("{} ({}){}{}; decode prefetch {}", s.name, s.features,
                     bf16_x_dot() ? "; BF16 decode: avx512bf16 dots, x rounded to bf16 as llama.cpp" : "",
                     std::getenv("BOSCH_KERNELS") ? ", forced by BOSCH_KERNELS" : "",
                     decode_prefetch_bytes ? fmt::format("{} bytes ahead", decode_prefetch_bytes)
                                           : std::string("off (BOSCH_PREFETCH=0)"));
}

}  // namespace bosch::kernels
