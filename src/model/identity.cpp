#include "model/identity.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/hash.h"

namespace bosch {

namespace {

// Hash of a strided sample (about 4096 elements) of one tensor: cheap, and different for any
// two models that differ in shape or training.
uint64_t hash_tensor(uint64_t h, const WeightView& w) {
  const uint64_t n = static_cast<uint64_t>(w.rows * w.cols);
  h = fnv1a(h, &n, sizeof n);
  const size_t step = std::max<size_t>(1, n / 4096), block = dtype_block(w.type);
  float buf[256];
  for (size_t i = 0; i < n; i += step) {
    const size_t r = i / w.cols, c = i % w.cols, c0 = c / block * block;
    dequant_blocks(w.type, w.row(static_cast<int64_t>(r)) + dtype_bytes(w.type, c0), buf, 1);
    h = fnv1a(h, &buf[c - c0], sizeof(float));
  }
  return h;
}

}  // namespace

std::string model_identity(const ModelConfig& c, const ModelMatrices& mats) {
  // Not FNV's offset basis (a digit short since the first version); kept because identities
  // are stored in mask files and journals.
  uint64_t h = 1469598103934665603ull;
  int dims[] = {c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, c.d_ff, c.vocab_size};
  h = fnv1a(h, dims, sizeof dims);
  h = fnv1a(h, c.arch.data(), c.arch.size());
  if (c.is_moe()) {  // dense models: nothing here, as before MoE
    int moe[] = {c.n_expert, c.n_expert_used, c.d_ff_expert, c.norm_topk_prob ? 1 : 0};
    h = fnv1a(h, moe, sizeof moe);
  }
  h = hash_tensor(h, mats.tok_embd.v);
  for (const auto& M : mats.layers) {
    for (const auto* t : {&M.wq, &M.wk, &M.wv, &M.wo, &M.w_gate, &M.w_up, &M.w_down}) h = hash_tensor(h, t->v);
    if (M.experts.router.empty()) continue;  // dense layers: the hash of the versions before MoE
    h = hash_tensor(h, M.experts.router.v);
    for (size_t e = 0; e < M.experts.gate.size(); ++e)
      for (const auto* t : {&M.experts.gate[e], &M.experts.up[e], &M.experts.down[e]}) h = hash_tensor(h, t->v);
  }
  return fmt::format("{:016x}", h);
}

}  // namespace bosch
