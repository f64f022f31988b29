// The tensor names of the two file formats in one table, serving the loaders (loader.cpp) and
// the writers (model_writer.cpp): each weight's role and its name in GGUF (llama.cpp's) and in
// Hugging Face safetensors. A name exists in one format only where the layouts differ (GGUF
// stacks a MoE layer's experts in one tensor, Hugging Face keeps one per expert).
#pragma once
#include <string>

namespace bosch {

enum class TensorFormat { gguf, hf };

enum class Weight {
  tok_embd, out_norm, lm_head, rope_freqs,                                   // the model's
  attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm, ffn_norm,           // a layer's
  w_gate, w_up, w_down, router,                                              // dense mlp, MoE router
  gate_exps, up_exps, down_exps,                                             // GGUF: stacked experts
  expert_gate, expert_up, expert_down,                                       // HF: one per expert
};

// The full tensor name: `layer` for a layer's weights, `expert` for Hugging Face's per-expert
// ones. Throws Error for a weight the format does not have.
std::string tensor_name(TensorFormat f, Weight w, int layer = -1, int expert = -1);

}  // namespace bosch
