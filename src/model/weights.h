// Model weights. ModelWeights: every weight as float32 in the Hugging Face layout (linear
// weights [out, in], rotate-half RoPE order for Q/K rows): what writers, random models and the
// tests' reference read. ModelMatrices: the linear weights the forward pass multiplies with,
// each in its stored type (F32 ... Q6_K), usually a view into the memory-mapped model file.
#pragma once
#include <memory>
#include <vector>

#include "kernels/qmatmul.h"

namespace bosch {

struct LayerWeights {
  std::vector<float> attn_norm;           // [d_model]
  std::vector<float> wq, wk, wv, wo;      // [n_heads*hd, d], [n_kv*hd, d], [n_kv*hd, d], [d, n_heads*hd]
  std::vector<float> bq, bk, bv;          // qwen2 biases (empty otherwise)
  std::vector<float> q_norm, k_norm;      // qwen3 per-head RMSNorm weights [hd] (empty otherwise)
  std::vector<float> ffn_norm;            // [d_model]
  std::vector<float> w_gate, w_up;        // [d_ff, d]
  std::vector<float> w_down;              // [d, d_ff]
  // qwen3moe (the dense w_gate/w_up/w_down empty): router [n_expert, d]; experts stacked
  std::vector<float> w_router;
  std::vector<float> w_gate_exps, w_up_exps;  // [n_expert, d_ff_expert, d]
  std::vector<float> w_down_exps;             // [n_expert, d, d_ff_expert]
};

struct ModelWeights {
  std::vector<float> tok_embd;            // [vocab, d]
  std::vector<LayerWeights> layers;
  std::vector<float> out_norm;            // [d]
  std::vector<float> lm_head;             // [vocab, d]; empty when tied to tok_embd
  const std::vector<float>& output() const { return lm_head.empty() ? tok_embd : lm_head; }
};

// One [rows, cols] weight in its stored type. `owned` holds the bytes when they are not the
// file's (row-permuted or converted copies); otherwise the view points into a mapping that
// ModelMatrices::keep_alive holds open.
struct WeightMatrix {
  WeightView v;
  std::shared_ptr<const std::vector<uint8_t>> owned;
  bool empty() const { return v.data == nullptr; }
};

// qwen3moe: a layer's router and experts. An expert's matrix is a slice of the stacked tensor
// (GGUF) or its own tensor (Hugging Face), in the stored type either way.
struct ExpertMatrices {
  WeightMatrix router;                        // [n_expert, d]
  std::vector<WeightMatrix> gate, up, down;   // per expert: [d_ff_expert, d], same, [d, d_ff_expert]
};

struct LayerMatrices {
  WeightMatrix wq, wk, wv, wo, w_gate, w_up, w_down;  // w_gate/up/down empty in MoE layers
  ExpertMatrices experts;                             // empty in dense layers
};

// Views of expert e = 0..n_expert-1 of a stacked [n_expert * rows, cols] matrix (sharing its
// bytes): rows e*rows .. (e+1)*rows-1.
inline std::vector<WeightMatrix> expert_slices(const WeightMatrix& stacked, int n_expert, int64_t rows) {
  std::vector<WeightMatrix> out;
  for (int e = 0; e < n_expert; ++e) {
    WeightView v = stacked.v;
    v.data = stacked.v.row(e * rows);
    v.rows = rows;
    out.push_back({v, stacked.owned});
  }
  return out;
}

struct ModelMatrices {
  WeightMatrix tok_embd;                  // [vocab, d]
  std::vector<LayerMatrices> layers;
  WeightMatrix lm_head;                   // empty when tied to tok_embd
  std::shared_ptr<const void> keep_alive; // the mapped file(s) the views point into
  const WeightMatrix& output() const { return lm_head.empty() ? tok_embd : lm_head; }
};

}  // namespace bosch
