// Runs a scope of a test under one kernel set (kernels/dispatch.h) and restores the previous
// one: the kernel tests compare each compiled set with the scalar references.
#pragma once
#include "kernels/dispatch.h"

namespace bosch::tests {

struct UseSet {
  const kernels::KernelSet& prev = kernels::active_kernels();
  explicit UseSet(const kernels::KernelSet& s) { kernels::select_kernels(s.name); }
  ~UseSet() { kernels::select_kernels(prev.name); }
};

}  // namespace bosch::tests
