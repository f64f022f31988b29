#include "model/tensor_names.h"

#include <fmt/format.h>

#include "util/error.h"

namespace bosch {

namespace {

struct Names {
  const char* gguf;  // "" = not in this format
  const char* hf;
  bool per_layer;
};

// Indexed by Weight.
constexpr Names kNames[] = {
    {"token_embd.weight", "model.embed_tokens.weight", false},
    {"output_norm.weight", "model.norm.weight", false},
    {"output.weight", "lm_head.weight", false},
    {"rope_freqs.weight", "", false},
    {"attn_norm.weight", "input_layernorm.weight", true},
    {"attn_q.weight", "self_attn.q_proj.weight", true},
    {"attn_k.weight", "self_attn.k_proj.weight", true},
    {"attn_v.weight", "self_attn.v_proj.weight", true},
    {"attn_output.weight", "self_attn.o_proj.weight", true},
    {"attn_q.bias", "self_attn.q_proj.bias", true},
    {"attn_k.bias", "self_attn.k_proj.bias", true},
    {"attn_v.bias", "self_attn.v_proj.bias", true},
    {"attn_q_norm.weight", "self_attn.q_norm.weight", true},
    {"attn_k_norm.weight", "self_attn.k_norm.weight", true},
    {"ffn_norm.weight", "post_attention_layernorm.weight", true},
    {"ffn_gate.weight", "mlp.gate_proj.weight", true},
    {"ffn_up.weight", "mlp.up_proj.weight", true},
    {"ffn_down.weight", "mlp.down_proj.weight", true},
    {"ffn_gate_inp.weight", "mlp.gate.weight", true},
    {"ffn_gate_exps.weight", "", true},
    {"ffn_up_exps.weight", "", true},
    {"ffn_down_exps.weight", "", true},
    {"", "mlp.experts.{}.gate_proj.weight", true},
    {"", "mlp.experts.{}.up_proj.weight", true},
    {"", "mlp.experts.{}.down_proj.weight", true},
};
static_assert(std::size(kNames) == static_cast<size_t>(Weight::expert_down) + 1, "one row per Weight");

}  // namespace

std::string tensor_name(TensorFormat f, Weight w, int layer, int expert) {
  const Names& n = kNames[static_cast<size_t>(w)];
  const std::string suffix = f == TensorFormat::gguf ? n.gguf : n.hf;
  check(!suffix.empty(), "tensor_name: weight {} has no {} name", static_cast<int>(w),
        f == TensorFormat::gguf ? "GGUF" : "Hugging Face");
  if (!n.per_layer) return suffix;
  check(layer >= 0, "tensor_name: weight {} needs a layer", static_cast<int>(w));
  const std::string prefix = f == TensorFormat::gguf ? fmt::format("blk.{}.", layer) : fmt::format("model.layers.{}.", layer);
  if (w >= Weight::expert_gate) {
    check(expert >= 0, "tensor_name: weight {} needs an expert", static_cast<int>(w));
    return prefix + fmt::format(fmt::runtime(suffix), expert);
  }
  return prefix + suffix;
}

}  // namespace bosch
