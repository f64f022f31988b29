// Byte-level BPE (GPT-2, Llama-3, Qwen2/Qwen3): added tokens are cut out first, each text
// section is normalized, split by the pre-tokenizer regexes, and every piece's bytes are merged
// by rank. Results per piece are cached (word -> ids).
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/regex_split.h"
#include "tokenizer/tokenizer.h"

namespace bosch {

// The GPT-2 byte <-> printable code point mapping used to store byte-level vocabularies.
char32_t byte_to_unicode(uint8_t b);
// The raw bytes a byte-level vocabulary string stands for. Code points outside the mapping are
// kept as their UTF-8 (so added tokens like "<|im_end|>" come through unchanged).
std::string byte_level_to_bytes(std::string_view mapped);

struct ByteLevelBpeSpec {
  std::string source;                       // file name, for messages
  std::vector<std::string> vocab;           // id -> vocabulary string (byte-level mapped)
  std::vector<std::pair<std::string, std::string>> merges;  // mapped strings, by rank
  std::vector<AddedToken> added;            // matched before splitting
  struct Split {
    std::string pattern;
    RegexSplitter::Behavior behavior = RegexSplitter::Behavior::Isolated;
  };
  std::vector<Split> splits;                // applied in order
  Normalizer normalizer;
  bool add_prefix_space = false;
  bool ignore_merges = false;               // a piece that is a whole vocab entry is taken as is
  int32_t bos = -1, eos = -1;
  bool add_bos = false;
  std::vector<int32_t> eog;
  std::string chat_template;
};

class ByteLevelBpeTokenizer : public Tokenizer {
 public:
  explicit ByteLevelBpeTokenizer(ByteLevelBpeSpec spec);

  std::vector<int32_t> encode(std::string_view text, bool add_bos = false) const override;
  std::string token_bytes(int32_t id) const override;
  int vocab_size() const override { return static_cast<int>(bytes_.size()); }

  // Exposed for tests: the ids of one pre-tokenized piece (no splitting, no cache).
  void encode_piece_uncached(std::string_view piece, std::vector<int32_t>& out) const;
  const MergeTable& merges() const { return merges_; }
  int32_t byte_id(uint8_t b) const { return byte_id_[b]; }

 private:
  void encode_section(std::string_view text, std::vector<int32_t>& out) const;
  void encode_piece(std::string_view piece, std::vector<int32_t>& out) const;

  std::string source_;
  std::vector<std::string> bytes_;  // id -> raw bytes
  struct StrHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, StrHash, std::equal_to<>> id_of_bytes_;
  int32_t byte_id_[256];
  MergeTable merges_;
  AddedTokenMatcher added_;
  std::vector<std::unique_ptr<RegexSplitter>> splitters_;
  Normalizer normalizer_;
  bool add_prefix_space_, ignore_merges_;

  // word -> ids cache, shared by threads.
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StrHash, std::equal_to<>> cache_;
};

}  // namespace bosch
