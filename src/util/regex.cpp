#define PCRE2_CODE_UNIT_WIDTH 8
#include "util/regex.h"

#include <pcre2.h>

#include <map>
#include <memory>
#include <mutex>

#include "util/error.h"

namespace bosch {

Regex::Regex(const std::string& pattern, std::string what) : pattern_(pattern), what_(std::move(what)) {
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    fail("{} does not compile at offset {}: {}", what_, off,
         reinterpret_cast<const char*>(msg));
  }
  code_ = code;
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::for_each_match(std::string_view text, const std::function<void(const Match&)>& fn) const {
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  pcre2_match_context* mctx = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = jit_ ? pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr) : nullptr;
  if (stack) pcre2_jit_stack_assign(mctx, nullptr, stack);
  struct Free {  // also when fn throws
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
  size_t pos = 0;
  while (pos <= text.size()) {
    int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, mctx)
                  : pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, mctx);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      fail("{} failed at byte {}: {}", what_, pos, reinterpret_cast<const char*>(msg));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    Match m{ov[0], ov[1], ov[0], ov[1]};
    if (rc > 1 && ov[2] != PCRE2_UNSET) {
      m.group_begin = ov[2];
      m.group_end = ov[3];
    } else if (rc > 1) {  // group 1 did not take part: an empty group (Python gives '')
      m.group_end = m.group_begin;
    }
    fn(m);
    if (m.end > m.begin) {
      pos = m.end;
    } else {  // empty match: step over one code point
      pos = m.begin + 1;
      while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
    }
  }
}

const Regex& cached_regex(const std::string& pattern, const std::string& what) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Regex>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[pattern];
  if (!slot) slot = std::make_unique<Regex>(pattern, what);
  return *slot;
}

}  // namespace bosch
