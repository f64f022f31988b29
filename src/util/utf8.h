// UTF-8 encode/decode for the tokenizers and the LongBench text primitives. Invalid input is
// replaced the way the WHATWG decoder (TextDecoder, Node's Buffer.toString) and Python's
// bytes.decode(errors="replace") do it: each maximal invalid subpart becomes one U+FFFD. The
// same rule on both sides lets us compare with the JavaScript and Python references.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace bosch::utf8 {

// Appends the UTF-8 encoding of code point cp.
void append(std::string& out, char32_t cp);

// Decodes one code point at s[i] (s must be valid UTF-8); advances i.
char32_t next(std::string_view s, size_t& i);

// True when s is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid(std::string_view s);

// s with every maximal invalid subpart replaced by U+FFFD (returns s unchanged when valid).
std::string sanitize(std::string_view s);

// Code points of s (invalid subparts become U+FFFD), and back.
std::u32string decode(std::string_view s);
std::string encode(std::u32string_view s);

// Length of the longest prefix of s that does not end inside an incomplete (but so far valid)
// multi-byte sequence. Bytes before the cut may still be invalid; sanitize() handles them.
size_t complete_prefix(std::string_view s);

}  // namespace bosch::utf8
