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

// Shapes of known models: "qwen3-0.6b", "qwen3-1.7b", "llama-tiny", ... (throws on unknown).
ModelConfig config_like(const std::string& arch, const std::string& like);
// Normal(0, std) weights (norm weights around 1), deterministic from seed.
ModelWeights random_weights(const ModelConfig& c, uint64_t seed, float std = 0.02f);

void save_hf(const ModelConfig& c, const ModelWeights& w, const std::string& dir, DType dtype);
// GGUF files carry a byte-level tokenizer of the config's vocabulary size (random_vocab.h)
// when vocab_size >= 257, so llama.cpp and other GGUF tools load them.
void save_gguf(const ModelConfig& c, const ModelWeights& w, const std::string& path, DType dtype);

}  // namespace bosch
