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
  std::string arch;          // "llama", "qwen2", "qwen3"
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
