#include "tasks/longbench_text.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <map>
#include <memory>
#include <mutex>

#include "util/error.h"

namespace bosch::longbench {

namespace {

// Decodes one code point at s[i]; returns its length, or 0 for an invalid sequence.
int decode_one(std::string_view s, size_t i, char32_t& out) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  int len;
  char32_t cp, min;
  if (c < 0x80) { out = c; return 1; }
  if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
  else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
  else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (int k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  out = cp;
  return len;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Appends the lowercase form of c (Python str.lower), possibly two code points.
void lower_into(std::u32string& out, char32_t c) {
  if (c < 0x80) { out += (c >= 'A' && c <= 'Z') ? c + 32 : c; return; }
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) { out += c + 32; return; }
  if (c == 0x130) { out += U'i'; out += char32_t(0x307); return; }  // İ -> i + combining dot
  if (c >= 0x100 && c <= 0x17F) {
    bool even_upper = (c <= 0x137) || (c >= 0x14A && c <= 0x177);
    bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (c == 0x178) { out += char32_t(0xFF); return; }
    if ((even_upper && c % 2 == 0) || (odd_upper && c % 2 == 1)) { out += c + 1; return; }
    out += c;
    return;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) { out += c + 32; return; }
  if (c == 0x386) { out += char32_t(0x3AC); return; }
  if (c >= 0x388 && c <= 0x38A) { out += c + 37; return; }
  if (c == 0x38C) { out += char32_t(0x3CC); return; }
  if (c == 0x38E || c == 0x38F) { out += c + 63; return; }
  if (c >= 0x410 && c <= 0x42F) { out += c + 32; return; }
  if (c >= 0x400 && c <= 0x40F) { out += c + 80; return; }
  if (c >= 0xFF21 && c <= 0xFF3A) { out += c + 32; return; }
  out += c;
}

struct CodeDeleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};

// Compiled patterns are cached: the metrics use a handful of fixed patterns.
const pcre2_code* compiled(const std::string& pattern) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<pcre2_code, CodeDeleter>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(pattern);
  if (it != cache.end()) return it->second.get();
  int err = 0;
  PCRE2_SIZE off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    fail("longbench: bad regex '{}' at {}: {}", pattern, off, reinterpret_cast<char*>(msg));
  }
  return cache.emplace(pattern, std::unique_ptr<pcre2_code, CodeDeleter>(code))
      .first->second.get();
}

// Calls fn(match_begin, match_end, group1_begin, group1_end) for each non-overlapping match.
template <class Fn>
void for_each_match(const std::string& pattern, const std::string& subject, Fn fn) {
  const pcre2_code* code = compiled(pattern);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  size_t pos = 0;
  while (pos <= subject.size()) {
    int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), pos,
                         0, md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      pcre2_match_data_free(md);
      fail("longbench: regex '{}' failed with PCRE2 error {}", pattern, rc);
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    size_t gb = rc > 1 ? ov[2] : b, ge = rc > 1 ? ov[3] : e;
    if (gb == PCRE2_UNSET) gb = ge = b;
    fn(b, e, gb, ge);
    if (e > b) {
      pos = e;
    } else {  // empty match: step over one code point
      if (b >= subject.size()) break;
      char32_t cp;
      int len = decode_one(subject, b, cp);
      pos = b + (len > 0 ? len : 1);
    }
  }
  pcre2_match_data_free(md);
}

}  // namespace

std::u32string utf8_to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    int len = decode_one(s, i, cp);
    if (len == 0) { out += char32_t(0xFFFD); i += 1; }
    else { out += cp; i += len; }
  }
  return out;
}

std::string u32_to_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

std::string sanitize_utf8(std::string_view s) { return u32_to_utf8(utf8_to_u32(s)); }

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string py_lower(std::string_view s) {
  std::u32string out;
  for (char32_t c : utf8_to_u32(s)) lower_into(out, c);
  return u32_to_utf8(out);
}

std::vector<std::string> py_split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::u32string cur;
  for (char32_t c : utf8_to_u32(s)) {
    if (py_isspace(c)) {
      if (!cur.empty()) out.push_back(u32_to_utf8(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(u32_to_utf8(cur));
  return out;
}

std::vector<std::string> py_split(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, p - start));
    start = p + sep.size();
  }
}

std::string join(const std::vector<std::string>& pieces, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i) out += sep;
    out += pieces[i];
  }
  return out;
}

std::vector<std::string> regex_findall(const std::string& pattern, std::string_view s) {
  std::string subject = sanitize_utf8(s);
  std::vector<std::string> out;
  for_each_match(pattern, subject, [&](size_t, size_t, size_t gb, size_t ge) {
    out.push_back(subject.substr(gb, ge - gb));
  });
  return out;
}

std::string regex_sub(const std::string& pattern, std::string_view replacement, std::string_view s) {
  std::string subject = sanitize_utf8(s);
  std::string out;
  size_t last = 0;
  for_each_match(pattern, subject, [&](size_t b, size_t e, size_t, size_t) {
    out.append(subject, last, b - last);
    out += replacement;
    last = e;
  });
  out.append(subject, last, std::string::npos);
  return out;
}

std::string first_line(std::string_view s) {
  size_t b = s.find_first_not_of('\n');
  if (b == std::string_view::npos) return "";
  s.remove_prefix(b);
  return std::string(s.substr(0, s.find('\n')));
}

}  // namespace bosch::longbench
