#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex_split.h"

#include <pcre2.h>

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

RegexSplitter::RegexSplitter(const std::string& pattern, Behavior behavior)
    : pattern_(pattern), behavior_(behavior) {
  std::string rewritten = rewrite_whitespace_classes(pattern);
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    fail("split regex /{}/ does not compile at offset {}: {}", pattern, off,
         reinterpret_cast<const char*>(msg));
  }
  code_ = code;
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

RegexSplitter::~RegexSplitter() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void RegexSplitter::split(std::string_view text,
                          const std::function<void(std::string_view)>& fn) const {
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  pcre2_match_context* mctx = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = jit_ ? pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr) : nullptr;
  if (stack) pcre2_jit_stack_assign(mctx, nullptr, stack);
  struct Free {
    pcre2_match_data* md;
    pcre2_match_context* mctx;
    pcre2_jit_stack* st;
    ~Free() {
      pcre2_match_data_free(md);
      pcre2_match_context_free(mctx);
      if (st) pcre2_jit_stack_free(st);
    }
  } guard{md, mctx, stack};

  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0, last = 0;
  while (pos <= text.size()) {
    int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, mctx)
                  : pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, mctx);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      fail("split regex /{}/ failed at byte {}: {}", pattern_, pos, reinterpret_cast<const char*>(msg));
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    if (e == b) {  // empty match: step over one code point
      pos = b + 1;
      while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (b > last && behavior_ == Behavior::Isolated) fn(text.substr(last, b - last));
    fn(text.substr(b, e - b));
    last = pos = e;
  }
  if (last < text.size() && behavior_ == Behavior::Isolated) fn(text.substr(last));
}

}  // namespace bosch
