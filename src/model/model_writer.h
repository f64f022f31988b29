// Writing models: random weights with real shapes (for benchmarks at realistic size) and the
// same weights saved as a Hugging Face directory or a GGUF file, each in that format's own
// conventions (GGUF llama Q/K rows permuted as llama.cpp's converter does), so tests can prove
// both loaders give the same logits.
#pragma once
#include <cstdint>
#include <string>

#include "formats/dtype.h"
#include "model/config.h"
#include "model/weights.h"

namespace bosch {

// Shapes of known models: like = 0.6b, 1.7b, 8b, 14b (the Qwen3 configs) or tiny (throws on unknown).
ModelConfig config_like(const std::string& arch, const std::string& like);
// Normal(0, std) weights (norm weights around 1), deterministic from seed.
ModelWeights random_weights(const ModelConfig& c, uint64_t seed, float std = 0.02f);

void save_hf(const ModelConfig& c, const ModelWeights& w, const std::string& dir, DType dtype);
// The tensor types of a GGUF file: one type for every matrix (`base`), or llama.cpp's mixes
// Q4_K_M / Q5_K_M (`mix` = Q6_K): the LM head (token_embd when tied) and attn_v / ffn_down of
// some layers in Q6_K, the other matrices in `base`. Norms and biases stay F32; matrices whose
// rows do not hold whole blocks fall back to Q8_0 or F32.
struct GgufDtype {
  DType base = DType::F32;
  DType mix = DType::F32;  // F32: no mix
};
// f32, f16, bf16, q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m, q5_k_m (error names the known ones).
GgufDtype parse_gguf_dtype(const std::string& s);

// GGUF files carry a byte-level tokenizer of the config's vocabulary size (random_vocab.h)
// when vocab_size >= 257, so llama.cpp and other GGUF tools load them.
void save_gguf(const ModelConfig& c, const ModelWeights& w, const std::string& path, DType dtype);
// Random weights written tensor by tensor (each generated from (seed, tensor) and encoded when
// the writer reaches it): an 8B model never needs more than one float32 tensor in memory. Not
// the values of random_weights(c, seed).
void save_gguf_random(const ModelConfig& c, uint64_t seed, const std::string& path, const GgufDtype& dtype,
                      float std = 0.02f);

}  // namespace bosch
