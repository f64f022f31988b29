#include "model/random_vocab.h"

#include <vector>

#include "formats/writers.h"
#include "util/error.h"
#include "util/utf8.h"

namespace bosch {

namespace {

// GPT-2's byte-to-unicode table: printable bytes stand for themselves, the others are shifted
// to U+0100 and up, so every byte is one visible character of the vocabulary.
std::vector<std::string> byte_chars() {
  std::vector<std::string> out(256);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    utf8::append(out[b], printable ? b : next++);
  }
  return out;
}

// llama.cpp token types (llama_token_type): 1 normal, 3 control, 5 unused.
constexpr int64_t kNormal = 1, kControl = 3, kUnused = 5;

}  // namespace

std::string pre_tokenizer_for_arch(const std::string& arch) {
  return arch == "llama" ? "llama-bpe" : "qwen2";
}

void add_byte_level_vocab(std::map<std::string, GGUFValue>& meta, int vocab_size, const std::string& pre) {
  check(vocab_size >= 257, "random vocabulary: vocab_size {} is too small (the byte-level vocabulary needs 256 byte "
        "tokens + <|endoftext|> = at least 257)", vocab_size);
  const std::vector<std::string> bytes = byte_chars();
  std::vector<std::string> tokens(bytes), merges;
  std::vector<int64_t> types(256, kNormal);
  std::vector<std::string> symbols{bytes[' ']};
  for (char c = 'a'; c <= 'z'; ++c) symbols.push_back(bytes[static_cast<unsigned char>(c)]);
  for (const std::string& a : symbols)
    for (const std::string& b : symbols) {
      if (static_cast<int>(tokens.size()) >= vocab_size - 1) break;
      merges.push_back(a + " " + b);
      tokens.push_back(a + b);
      types.push_back(kNormal);
    }
  for (int i = 0; static_cast<int>(tokens.size()) < vocab_size - 1; ++i) {
    tokens.push_back("<|bosch_pad_" + std::to_string(i) + "|>");
    types.push_back(kUnused);
  }
  tokens.push_back("<|endoftext|>");
  types.push_back(kControl);
  const int64_t eos = vocab_size - 1;
  meta["tokenizer.ggml.model"] = gguf_string("gpt2");
  meta["tokenizer.ggml.pre"] = gguf_string(pre);
  meta["tokenizer.ggml.tokens"] = gguf_string_array(tokens);
  meta["tokenizer.ggml.token_type"] = gguf_int_array(types, gguf_type::INT32);
  meta["tokenizer.ggml.merges"] = gguf_string_array(merges);
  meta["tokenizer.ggml.bos_token_id"] = gguf_int(eos, gguf_type::UINT32);
  meta["tokenizer.ggml.eos_token_id"] = gguf_int(eos, gguf_type::UINT32);
  meta["tokenizer.ggml.add_bos_token"] = gguf_bool(false);
}

}  // namespace bosch
