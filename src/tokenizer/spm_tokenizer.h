// SentencePiece-style BPE as llama.cpp runs it for GGUF "llama" vocabularies (stories260K,
// Llama-2, Mistral): a space is prepended to each text fragment that follows the start or a
// special token, spaces become U+2581, UTF-8 characters are merged pairwise by highest token
// score (leftmost on ties), and characters that are not tokens fall back to <0xNN> byte tokens.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

struct SpmSpec {
  std::string source;
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;  // GGUF token types: 1 normal, 2 unknown, 3 control, 4 user, 5 unused, 6 byte
  int32_t bos = 1, eos = 2, unk = 0;
  bool add_bos = true;
  bool add_space_prefix = true;
  std::vector<int32_t> eog;
  std::string chat_template;
};

class SpmTokenizer : public Tokenizer {
 public:
  enum TokenType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
  explicit SpmTokenizer(SpmSpec spec);

  std::vector<int32_t> encode(std::string_view text, bool add_bos = false) const override;
  std::string token_bytes(int32_t id) const override;
  int vocab_size() const override { return static_cast<int>(tokens_.size()); }

 private:
  void encode_fragment(const std::string& text, std::vector<int32_t>& out) const;
  int32_t find(std::string_view s) const;

  std::string source_;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<int32_t> types_;
  struct StrHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, StrHash, std::equal_to<>> id_of_;
  int32_t byte_id_[256];
  int32_t unk_ = 0;
  bool add_space_prefix_;
  AddedTokenMatcher specials_;
};

}  // namespace bosch
