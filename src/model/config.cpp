#include "model/config.h"

#include "util/error.h"

namespace bosch {

void ModelConfig::validate(const std::string& source) const {
  auto positive = [&](int v, const char* name) {
    check(v > 0 && v < (1 << 24), "{}: {} must be a positive integer below 2^24, got {}", source,
          name, v);
  };
  check(arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "qwen3moe",
        "{}: architecture '{}' is not supported (expected llama, qwen2, qwen3 or qwen3moe)", source, arch);
  positive(n_layers, "number of layers");
  positive(d_model, "hidden size");
  positive(n_heads, "number of attention heads");
  positive(n_kv_heads, "number of KV heads");
  positive(head_dim, "head dimension");
  positive(d_ff, "feed-forward size");
  positive(vocab_size, "vocabulary size");
  check(n_heads % n_kv_heads == 0,
        "{}: attention heads ({}) must be a multiple of KV heads ({})", source, n_heads, n_kv_heads);
  check(head_dim % 2 == 0, "{}: head dimension must be even for RoPE, got {}", source, head_dim);
  // The projections' widths are ints in the forward pass: bound them as each dimension is.
  check(int64_t{n_heads} * head_dim < (1 << 24), "{}: attention heads x head dimension ({} x {}) must be below 2^24",
        source, n_heads, head_dim);
  // Finite and in range (NaN fails every comparison): theta below 1 makes the RoPE frequencies
  // theta^(-2i/d) grow without bound (1e-300 gives inf, then NaN logits); the embedded models
  // use 1e24.
  check(rope_theta >= 1 && rope_theta <= 1e30, "{}: rope theta must be in [1, 1e30], got {}", source, rope_theta);
  check(norm_eps > 0 && norm_eps < 1, "{}: norm epsilon must be in (0, 1), got {}", source, norm_eps);
  if (arch == "qwen3moe") {
    positive(n_expert, "number of experts");
    positive(d_ff_expert, "expert feed-forward size");
    check(n_expert_used >= 1 && n_expert_used <= n_expert,
          "{}: experts used per token must be in [1, {}] (the number of experts), got {}", source, n_expert,
          n_expert_used);
  } else {
    check(n_expert == 0 && n_expert_used == 0, "{}: architecture '{}' has no experts, got {} ({} used)", source,
          arch, n_expert, n_expert_used);
  }
}

}  // namespace bosch
