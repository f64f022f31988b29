#include "tokenizer/regex_split.h"

#include "util/checked.h"
#include "util/error.h"

namespace bosch {

const char* const kGpt2SplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kLlama3SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::string split_pattern_for_gguf_pre(const std::string& pre, const std::string& file) {
  if (pre == "default" || pre == "gpt2" || pre == "gpt-2") return kGpt2SplitPattern;
  if (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "smaug-bpe")
    return kLlama3SplitPattern;
  if (pre == "qwen2" || pre == "qwen35" || pre == "deepseek-r1-qwen") return kQwen2SplitPattern;
  fail("{}: tokenizer.ggml.pre = \"{}\" is not supported (expected one of default, gpt2, llama3, "
       "llama-bpe, qwen2)", file, pre);
}

std::string rewrite_whitespace_classes(std::string_view p) {
  // Unicode White_Space (what Rust's regex `\s` matches).
  static const std::string ws =
      R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char e = p[++i];
      if (e == 's') out += in_class ? ws : "[" + ws + "]";
      else if (e == 'S' && !in_class) out += "[^" + ws + "]";
      else { out += c; out += e; }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];  // literal ']' first in a class
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

std::chrono::steady_clock::time_point split_deadline(size_t bytes) {
  const double seconds = 1.0 + 2e-6 * static_cast<double>(bytes);
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

RegexSplitter::RegexSplitter(const std::string& pattern, Behavior behavior, std::string what)
    : pattern_(pattern), what_(std::move(what)), behavior_(behavior),
      regex_(rewrite_whitespace_classes(pattern), fmt::format("split regex /{}/", excerpt(pattern))) {}

void RegexSplitter::split(std::string_view text, const std::function<void(std::string_view)>& fn,
                          std::chrono::steady_clock::time_point deadline) const {
  size_t last = 0, matches = 0;
  regex_.for_each_match(text, [&](const Regex::Match& m) {
    // The clock every 64 matches (one match is bounded by PCRE2's match limit): a clock read
    // per match would cost about as much as matching a short piece.
    if ((++matches & 63) == 0 && std::chrono::steady_clock::now() >= deadline)  // (the message is built only here)
      fail("{}pre-tokenizer split /{}/ passed its time bound (1 s + 2 us per input byte) at byte {} of a {}-byte "
           "piece: the pattern backtracks quadratically on this text",
           what_.empty() ? "" : what_ + ": ", excerpt(pattern_), m.begin, text.size());
    if (m.end == m.begin) return;  // empty matches split nothing
    if (m.begin > last && behavior_ == Behavior::Isolated) fn(text.substr(last, m.begin - last));
    fn(text.substr(m.begin, m.end - m.begin));
    last = m.end;
  });
  if (last < text.size() && behavior_ == Behavior::Isolated) fn(text.substr(last));
}

}  // namespace bosch
