// Pre-tokenizer split with PCRE2 (UTF + UCP, JIT-compiled). `\s`/`\S` in the pattern are
// rewritten to the Unicode White_Space set so that they mean what they mean in the Rust `regex`
// crate used by Hugging Face tokenizers (PCRE2 alone would also match U+180E; JavaScript would
// also match U+FEFF and not U+0085).
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "util/regex.h"

namespace bosch {

// Well-known split patterns (as in Hugging Face tokenizer.json files and llama.cpp).
extern const char* const kGpt2SplitPattern;
extern const char* const kLlama3SplitPattern;
extern const char* const kQwen2SplitPattern;

// Pattern for a GGUF `tokenizer.ggml.pre` value; throws Error naming the value when unknown.
std::string split_pattern_for_gguf_pre(const std::string& pre, const std::string& file);

std::string rewrite_whitespace_classes(std::string_view pattern);

// The time one text may spend in the pre-tokenizer's regexes: 1 s + 2 us per byte, about 50x
// what the real split patterns take. A pattern with quadratic backtracking stays under PCRE2's
// per-match limit at every match but not under this (issue #40: 52 s on 320 KB before).
std::chrono::steady_clock::time_point split_deadline(size_t bytes);

class RegexSplitter {
 public:
  enum class Behavior { Isolated, Removed };  // keep the text between matches, or drop it
  // `what` names the step in errors (the tokenizer file and the step's index).
  RegexSplitter(const std::string& pattern, Behavior behavior = Behavior::Isolated, std::string what = "");

  // Calls fn for each non-empty piece, in order. text must be valid UTF-8. Throws Error naming
  // the step when the clock passes `deadline` (split_deadline of the whole text).
  void split(std::string_view text, const std::function<void(std::string_view)>& fn,
             std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_, what_;
  Behavior behavior_;
  Regex regex_;  // pattern_ with \s and \S rewritten
};

}  // namespace bosch
