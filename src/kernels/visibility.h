// The visibility rule of bosch, defined once: query at absolute position i sees key j iff
// j <= i and (W == 0 or i - j < W or j < S). W = 0 is full attention; W counts the current
// token (W = 1 sees itself plus the sinks). Used by the attention kernels (every instruction
// set), their naive reference, AttentionPlan::visible and the static rankings' window mass.
#pragma once
#include <cstdint>

namespace bosch::kernels {

// static: each translation unit keeps its own copy, compiled for its own instruction set (the
// per-ISA kernel files include this too; an inline function would be merged across them and
// one set's code could run on a CPU without it).
[[gnu::always_inline]] static constexpr bool sees_key(int64_t i, int64_t j, int window, int sinks) {
  return j <= i && (window == 0 || i - j < window || j < sinks);
}

}  // namespace bosch::kernels
