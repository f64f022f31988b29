// A byte-level BPE vocabulary ("gpt2" in GGUF terms) of any size, written into the GGUF files of
// `bosch make-random` so llama.cpp and other GGUF tools load them (llama.cpp stops at
// "key not found in model: tokenizer.ggml.model" otherwise) and speed can be compared on the
// same file. Layout for a vocabulary of V tokens (V >= 257):
//   ids 0..255      the 256 byte tokens (GPT-2's byte-to-unicode characters), so any text encodes
//   next ids        merges of pairs of {space, a..z} ("Ġa", "ab", ...) as far as V allows
//   then            "<|bosch_pad_N|>" (type UNUSED) up to V - 1: the shape's real vocabulary size
//   id V - 1        "<|endoftext|>" (CONTROL), the EOS/BOS id
#pragma once
#include <map>
#include <string>

#include "formats/gguf.h"

namespace bosch {

// Adds tokenizer.ggml.* keys (model, pre, tokens, token_type, merges, bos/eos ids, add_bos) to
// `meta`. `pre` is the pre-tokenizer name ("qwen2", "llama-bpe", ...). Error when V < 257.
void add_byte_level_vocab(std::map<std::string, GGUFValue>& meta, int vocab_size, const std::string& pre);

// The pre-tokenizer an architecture's real models use ("qwen2" for qwen2/qwen3, "llama-bpe").
std::string pre_tokenizer_for_arch(const std::string& arch);

}  // namespace bosch
