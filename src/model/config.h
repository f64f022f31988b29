// Model hyper-parameters, read from GGUF metadata or a Hugging Face config.json.
#pragma once
#include <cstdint>
#include <string>

namespace bosch {

struct RopeScaling {
  bool enabled = false;      // Llama-3 style ("llama3") frequency scaling
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position = 8192;
};

struct ModelConfig {
  std::string arch;          // "llama", "qwen2", "qwen3", "qwen3moe"
  int n_layers = 0;
  int d_model = 0;
  int n_heads = 0;           // query heads
  int n_kv_heads = 0;
  int head_dim = 0;
  int d_ff = 0;
  int vocab_size = 0;
  int max_context = 0;       // what the file says (informational)
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  double norm_eps = 1e-5;
  bool qk_norm = false;      // qwen3: RMSNorm over each head's q and k
  bool qkv_bias = false;     // qwen2: biases on q, k, v projections
  bool tied_embeddings = false;
  // qwen3moe: every layer's feed-forward is a mixture of experts (d_ff then unused).
  int n_expert = 0;          // experts per layer (0: a dense SwiGLU MLP)
  int n_expert_used = 0;     // experts each token is routed to (top k)
  int d_ff_expert = 0;       // one expert's feed-forward size
  bool norm_topk_prob = false;  // the k routing weights rescaled to sum 1

  bool is_moe() const { return n_expert > 0; }
  // Multiply-adds of one token's feed-forward (MoE: the router and the k experts it uses).
  double ffn_macs_per_token() const {
    return is_moe() ? static_cast<double>(d_model) * (n_expert + 3.0 * d_ff_expert * n_expert_used)
                    : 3.0 * d_model * d_ff;
  }

  int group_size() const { return n_heads / n_kv_heads; }
  int n_kv_total() const { return n_layers * n_kv_heads; }  // N, the number of mask bits
  // Bytes of K and V per token for the full model at `bytes_per_elem` (4 = float32 cache).
  int64_t kv_bytes_per_token(int bytes_per_elem = 4) const {
    return int64_t(2) * n_layers * n_kv_heads * head_dim * bytes_per_elem;
  }
  // Throws Error (mentioning `source`) when dimensions are inconsistent.
  void validate(const std::string& source) const;
};

}  // namespace bosch
