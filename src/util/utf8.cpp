#include "util/utf8.h"

namespace bosch::utf8 {
namespace {

// Number of bytes of the sequence a lead byte starts (0: not a lead byte), and the allowed
// range of the second byte (WHATWG / Unicode Table 3-7).
struct Lead {
  int len;
  uint8_t lo, hi;
};

Lead lead_info(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Length of the valid prefix of the sequence starting at s[i]: returns {consumed, complete}.
// consumed >= 1 always; complete is false when the sequence is invalid or truncated.
struct Scan {
  size_t n;
  bool complete, truncated;
};

Scan scan_one(std::string_view s, size_t i) {
  auto b = static_cast<uint8_t>(s[i]);
  Lead l = lead_info(b);
  if (l.len == 1) return {1, true, false};
  if (l.len == 0) return {1, false, false};
  size_t k = 1;
  for (; k < static_cast<size_t>(l.len); ++k) {
    if (i + k >= s.size()) return {k, false, true};
    auto c = static_cast<uint8_t>(s[i + k]);
    uint8_t lo = k == 1 ? l.lo : 0x80, hi = k == 1 ? l.hi : 0xBF;
    if (c < lo || c > hi) return {k, false, false};
  }
  return {k, true, false};
}

}  // namespace

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

char32_t next(std::string_view s, size_t& i) {
  auto b = static_cast<uint8_t>(s[i]);
  if (b < 0x80) { ++i; return b; }
  int len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
  char32_t cp = b & (0x7F >> len);
  for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

bool is_valid(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<uint8_t>(s[i]) < 0x80) { ++i; continue; }  // ASCII fast path
    Scan sc = scan_one(s, i);
    if (!sc.complete) return false;
    i += sc.n;
  }
  return true;
}

std::string sanitize(std::string_view s) {
  if (is_valid(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    Scan sc = scan_one(s, i);
    if (sc.complete) out.append(s.substr(i, sc.n));
    else out += "\xEF\xBF\xBD";
    i += sc.n;
  }
  return out;
}

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    Scan sc = scan_one(s, i);
    if (sc.complete) {
      size_t j = i;
      out += next(s, j);
    } else {
      out += char32_t(0xFFFD);
    }
    i += sc.n;
  }
  return out;
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append(out, c);
  return out;
}

size_t complete_prefix(std::string_view s) {
  // Only the last (at most 3) bytes can start an incomplete sequence.
  size_t start = s.size() >= 3 ? s.size() - 3 : 0;
  for (size_t i = start; i < s.size(); ++i) {
    if (lead_info(static_cast<uint8_t>(s[i])).len < 2) continue;
    Scan sc = scan_one(s, i);
    if (sc.truncated) return i;
  }
  return s.size();
}

}  // namespace bosch::utf8
