// Reading user files safely: numbers as exact integers in a stated range (no float-to-int
// casts, no wrap-around), JSON parsed with a bounded nesting depth (deep nesting would overflow
// the stack when a value is copied, dumped or destroyed), and error messages that quote at most
// a short excerpt of what the file holds. Every error is a bosch::Error naming the file (`what`)
// and the field.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace bosch {

// Deeper than any real config, tokenizer or mask file (tokenizer.json nests about 6 levels).
constexpr int kMaxJsonDepth = 64;

// At most `max` bytes of s (cut at a UTF-8 boundary), with "... (N bytes)" when cut.
std::string excerpt(std::string_view s, size_t max = 60);
// A short description of a JSON value for messages: scalars as written (excerpted), containers
// by kind and size ("an array of 3 values"), never dumped whole.
std::string describe_json(const nlohmann::json& v);

// The JSON library's message in our words: without its "[json.exception.parse_error.101] "
// prefix, excerpted to `max` bytes.
std::string json_error_text(const nlohmann::json::exception& e, size_t max = 160);

// Parses `text` as JSON. Error "<what>: not valid JSON (...)" or "<what>: JSON nested deeper
// than 64 levels" (checked on the text before parsing, so nothing deep is ever built).
nlohmann::json parse_json_checked(std::string_view text, const std::string& what,
                                  int max_depth = kMaxJsonDepth);

// An exact integer in [lo, hi]: JSON integers, or floats with an integral value (32.0);
// anything else is "<what>: field '<field>' must be an integer in [lo, hi], got ...".
int64_t json_int(const nlohmann::json& v, const std::string& what, const std::string& field,
                 int64_t lo, int64_t hi);
// A finite number in [lo, hi].
double json_number(const nlohmann::json& v, const std::string& what, const std::string& field,
                   double lo, double hi);
std::string json_string(const nlohmann::json& v, const std::string& what, const std::string& field);
bool json_bool(const nlohmann::json& v, const std::string& what, const std::string& field);

// v in [lo, hi], else "<what>: <field> is v, expected an integer in [lo, hi]" (for GGUF metadata
// and other integers that arrive already typed).
int64_t int_in_range(int64_t v, int64_t lo, int64_t hi, const std::string& what,
                     const std::string& field);

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

}  // namespace bosch
