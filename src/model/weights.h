// Model weights in memory, float32, in the Hugging Face layout (linear weights [out, in],
// rotate-half RoPE order for Q/K rows). Loaders convert every source format to this.
#pragma once
#include <vector>

namespace bosch {

struct LayerWeights {
  std::vector<float> attn_norm;           // [d_model]
  std::vector<float> wq, wk, wv, wo;      // [n_heads*hd, d], [n_kv*hd, d], [n_kv*hd, d], [d, n_heads*hd]
  std::vector<float> bq, bk, bv;          // qwen2 biases (empty otherwise)
  std::vector<float> q_norm, k_norm;      // qwen3 per-head RMSNorm weights [hd] (empty otherwise)
  std::vector<float> ffn_norm;            // [d_model]
  std::vector<float> w_gate, w_up;        // [d_ff, d]
  std::vector<float> w_down;              // [d, d_ff]
};

struct ModelWeights {
  std::vector<float> tok_embd;            // [vocab, d]
  std::vector<LayerWeights> layers;
  std::vector<float> out_norm;            // [d]
  std::vector<float> lm_head;             // [vocab, d]; empty when tied to tok_embd
  const std::vector<float>& output() const { return lm_head.empty() ? tok_embd : lm_head; }
};

}  // namespace bosch
