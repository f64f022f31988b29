// Test tokenizers for the task generators (no model files needed):
//   ByteTokenizer: one token per byte (ids 0..255), BOS 256, EOS 257, and the literal special
//                  tokens "<|im_start|>" 258 and "<|im_end|>" 259.
//   WordTokenizer: a space plus a run of letters/digits is one token, any other byte is one
//                  token (a growing vocabulary), BOS 1 — multi-byte tokens like a real BPE.
#pragma once
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "tasks/prompt_fit.h"
#include "tokenizer/tokenizer.h"

namespace bosch::testing {

class ByteTokenizer : public Tokenizer {
 public:
  explicit ByteTokenizer(bool add_bos = true) {
    bos_id_ = 256;
    eos_id_ = 257;
    add_bos_ = add_bos;
  }
  std::vector<int32_t> encode(std::string_view text, bool add_bos = false) const override {
    std::vector<int32_t> out;
    if (add_bos && add_bos_) out.push_back(bos_id_);
    static const std::string specials[2] = {"<|im_start|>", "<|im_end|>"};
    for (size_t i = 0; i < text.size();) {
      bool special = false;
      for (int s = 0; s < 2; ++s)
        if (text.compare(i, specials[s].size(), specials[s]) == 0) {
          out.push_back(258 + s);
          i += specials[s].size();
          special = true;
          break;
        }
      if (!special) out.push_back(static_cast<unsigned char>(text[i++]));
    }
    return out;
  }
  std::string token_bytes(int32_t id) const override {
    if (id < 256) return std::string(1, static_cast<char>(id));
    if (id == 258) return "<|im_start|>";
    if (id == 259) return "<|im_end|>";
    return "";
  }
  int vocab_size() const override { return 260; }
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string s;
    for (int32_t id : ids) s += token_bytes(id);
    return s;
  }
};

class WordTokenizer : public Tokenizer {
 public:
  WordTokenizer() {
    bos_id_ = 1;
    eos_id_ = 2;
    add_bos_ = true;
    vocab_ = {"", "", ""};
  }
  std::vector<int32_t> encode(std::string_view text, bool add_bos = false) const override {
    std::vector<int32_t> out;
    if (add_bos && add_bos_) out.push_back(bos_id_);
    auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
    for (size_t i = 0; i < text.size();) {
      size_t j = i + 1;
      if (text[i] == ' ' || alnum(text[i]))
        while (j < text.size() && alnum(text[j])) ++j;
      out.push_back(id_of(std::string(text.substr(i, j - i))));
      i = j;
    }
    return out;
  }
  std::string token_bytes(int32_t id) const override { return vocab_.at(id); }
  int vocab_size() const override { return static_cast<int>(vocab_.size()); }
  std::string decode(const std::vector<int32_t>& ids) const override {
    std::string s;
    for (int32_t id : ids) s += token_bytes(id);
    return s;
  }

 private:
  int32_t id_of(const std::string& piece) const {
    auto it = ids_.find(piece);
    if (it != ids_.end()) return it->second;
    vocab_.push_back(piece);
    return ids_[piece] = static_cast<int32_t>(vocab_.size() - 1);
  }
  mutable std::vector<std::string> vocab_;
  mutable std::map<std::string, int32_t> ids_;
};

inline ChatWrap fake_chat() {
  ChatWrap w;
  w.enabled = true;
  w.prefix = "<|im_start|>user\n";
  w.suffix = "<|im_end|>\n<|im_start|>assistant\n";
  return w;
}

}  // namespace bosch::testing
