// Runs a scope of a test under one kernel set (kernels/dispatch.h) and restores the previous
// one: the kernel tests compare each compiled set with the scalar references.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

inline bool cpu_runs_bf16_prefill() {
  __builtin_cpu_init();
  return kernels::cpu_runs(kernels::avx512_kernel_set()) && __builtin_cpu_supports("avx512bf16");
}

// Where the bf16 prefill cannot run here under the active set: the reason to skip with, else "".
inline std::string bf16_prefill_missing() {
  if (!cpu_runs_bf16_prefill()) return "this CPU lacks AVX512_BF16 (the bf16 prefill is built, not run)";
  if (kernels::active_kernels().name != std::string("avx512")) return "BOSCH_KERNELS chose another set";
  return "";
}

// The model's logits for tokens under the float32 prefill and under the bf16 one (which must run).
template <class M, class Tokens>
std::pair<std::vector<float>, std::vector<float>> f32_and_bf16_logits(const M& m, const Tokens& tokens) {
  std::pair<std::vector<float>, std::vector<float>> out;
  {
    UsePrecision p(kernels::Precision::f32);
    out.first = m.forward_all(tokens, m.full_plan());
  }
  UsePrecision p(kernels::Precision::bf16);
  if (!kernels::bf16_prefill()) throw std::runtime_error("the bf16 prefill did not run");
  out.second = m.forward_all(tokens, m.full_plan());
  return out;
}

}  // namespace bosch::tests
