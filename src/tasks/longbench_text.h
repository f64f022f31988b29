// Text primitives with Python 3 `str` semantics, so the LongBench metrics can be reproduced in
// C++: strings are UTF-8 here, Python operates on code points. Only what the official metrics
// use is provided: lower(), split() on Unicode whitespace, lstrip/split on '\n', and regex
// findall/sub via PCRE2 in UTF + UCP mode (where \d, \w and \b follow Unicode properties as
// Python's `re` does for str patterns). UTF-8 decoding (invalid input -> U+FFFD as Python's
// bytes.decode(errors="replace")) is util/utf8.h.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace bosch::longbench {

// Python str.isspace() for a code point (the set str.split() with no argument splits on).
bool py_isspace(char32_t c);
// Python str.lower(). Exact for ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic and
// fullwidth Latin; other scripts are left unchanged (LongBench text is English or Chinese).
std::string py_lower(std::string_view s);
// Python str.split() (no argument): split on runs of Unicode whitespace, no empty pieces.
std::vector<std::string> py_split_ws(std::string_view s);
// Python s.split(sep) with a literal separator (keeps empty pieces).
std::vector<std::string> py_split(std::string_view s, std::string_view sep);
// " ".join(pieces)
std::string join(const std::vector<std::string>& pieces, std::string_view sep);

// re.findall(pattern, s): whole matches when the pattern has no group, else group 1.
std::vector<std::string> regex_findall(const std::string& pattern, std::string_view s);
// re.sub(pattern, replacement, s) with a literal replacement.
std::string regex_sub(const std::string& pattern, std::string_view replacement, std::string_view s);

// prediction.lstrip('\n').split('\n')[0]: the first-line rule of the official scorer.
std::string first_line(std::string_view s);

}  // namespace bosch::longbench
