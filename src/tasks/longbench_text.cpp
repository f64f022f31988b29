#include "tasks/longbench_text.h"

#include "util/regex.h"
#include "util/utf8.h"

namespace bosch::longbench {

namespace {

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

}  // namespace

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string py_lower(std::string_view s) {
  std::u32string out;
  for (char32_t c : utf8::decode(s)) lower_into(out, c);
  return utf8::encode(out);
}

std::vector<std::string> py_split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::u32string cur;
  for (char32_t c : utf8::decode(s)) {
    if (py_isspace(c)) {
      if (!cur.empty()) out.push_back(utf8::encode(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(utf8::encode(cur));
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
  std::string subject = utf8::sanitize(s);
  std::vector<std::string> out;
  cached_regex(pattern, "longbench regex /" + pattern + "/").for_each_match(subject, [&](const Regex::Match& m) {
    out.push_back(subject.substr(m.group_begin, m.group_end - m.group_begin));
  });
  return out;
}

std::string regex_sub(const std::string& pattern, std::string_view replacement, std::string_view s) {
  std::string subject = utf8::sanitize(s);
  std::string out;
  size_t last = 0;
  cached_regex(pattern, "longbench regex /" + pattern + "/").for_each_match(subject, [&](const Regex::Match& m) {
    out.append(subject, last, m.begin - last);
    out += replacement;
    last = m.end;
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
