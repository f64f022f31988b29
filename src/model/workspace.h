// Scratch buffers of a forward pass, grown on demand and reused: no allocation per layer. Not
// shared between threads: a caller that runs many passes (the search objective) owns one and
// passes it; a Model call without one uses its own for that call.
#pragma once
#include <cstddef>
#include <vector>

namespace bosch {

struct Workspace {
  std::vector<float> xn, q, k, v, att, gate, up;
  // mixture of experts (moe.cpp): router logits and probabilities, the k weights per token, an
  // expert's gathered rows and outputs, the per-token sum; the choices grouped by expert
  std::vector<float> router, route_weight, moe_in, moe_out, moe_sum;
  std::vector<int> route_expert, expert_begin, expert_slot;
  // v's first n floats, growing it when it is shorter (old contents are not kept meaningful).
  static float* grow(std::vector<float>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
  }
};

}  // namespace bosch
