// Runs a scope of a test under one kernel set (kernels/dispatch.h) and restores the previous
// one: the kernel tests compare each compiled set with the scalar references.
#pragma once
#include <string>

#include "kernels/dispatch.h"

namespace bosch::tests {

struct UseSet {
  const kernels::KernelSet& prev = kernels::active_kernels();
  explicit UseSet(const kernels::KernelSet& s) { kernels::select_kernels(s.name); }
  ~UseSet() { kernels::select_kernels(prev.name); }
};

// The same for the prefill precision (BOSCH_PRECISION).
struct UsePrecision {
  const kernels::Precision prev = kernels::requested_precision();
  explicit UsePrecision(kernels::Precision p) { kernels::set_prefill_precision(p); }
  ~UsePrecision() { kernels::set_prefill_precision(prev); }
};

// Where the bf16 prefill cannot run here: the reason to skip with, else "".
inline std::string bf16_prefill_missing() {
  __builtin_cpu_init();
  if (!kernels::cpu_runs(kernels::avx512_kernel_set()) || !__builtin_cpu_supports("avx512bf16"))
    return "this CPU lacks AVX512_BF16 (the bf16 prefill is built, not run)";
  if (kernels::active_kernels().name != std::string("avx512")) return "BOSCH_KERNELS chose another set";
  return "";
}

}  // namespace bosch::tests
