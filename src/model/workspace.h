// Scratch buffers of a forward pass, grown on demand and reused: no allocation per layer. Not
// shared between threads: a caller that runs many passes (the search objective) owns one and
// passes it; a Model call without one uses its own for that call.
#pragma once
#include <cstddef>
#include <vector>

#include "util/memory_budget.h"

namespace bosch {

struct Workspace {
  std::vector<float> xn;
  // One layer's rows in flight: q, k, v and the attention output while attention runs, then the
  // MLP's gate and up (an expert's, for MoE). q..att are dead once the output projection has
  // run, so both sets share this buffer: a layer's peak is the larger set, not the sum (24 MiB
  // of 48 at 1024 tokens of a Qwen3-0.6B shape). Carve with layer_rows().
  std::vector<float> rows;
  // mixture of experts (moe.cpp): router logits and probabilities, the k weights per token, an
  // expert's gathered rows and outputs, the per-token sum; the choices grouped by expert
  std::vector<float> router, route_weight, moe_in, moe_out, moe_sum;
  std::vector<int> route_expert, expert_begin, expert_slot;
  // v's first n floats, growing it when it is shorter (old contents are not kept meaningful).
  // Growth past 256 MiB is checked against what the machine has first (a --lengths the flag's
  // range admits can ask for more: a clear error, not std::bad_alloc).
  static float* grow(std::vector<float>& v, size_t n) {
    if (v.size() < n) {
      if (n * sizeof(float) > (size_t{256} << 20)) check_memory_for(n * sizeof(float), "a forward pass's activations");
      v.resize(n);
    }
    return v.data();
  }
  // rows, grown to hold the parts (counts of floats), cut into consecutive pieces: out[i] is
  // part i. Pointers from an earlier call are invalid after this one.
  template <size_t N>
  void layer_rows(const size_t (&parts)[N], float* (&out)[N]) {
    size_t total = 0;
    for (size_t p : parts) total += p;
    float* at = grow(rows, total);
    for (size_t i = 0; i < N; ++i) out[i] = at, at += parts[i];
  }
};

}  // namespace bosch
