#include "util/checked.h"

#include <cmath>

#include "util/error.h"

namespace bosch {

using nlohmann::json;

std::string excerpt(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
  return fmt::format("{}... ({} bytes)", s.substr(0, cut), s.size());
}

std::string describe_json(const json& v) {
  switch (v.type()) {
    case json::value_t::object: return fmt::format("an object of {} fields", v.size());
    case json::value_t::array: return fmt::format("an array of {} values", v.size());
    case json::value_t::string: return fmt::format("\"{}\"", excerpt(v.get_ref<const std::string&>()));
    default: return excerpt(v.dump());  // scalars: short already
  }
}

namespace {

// Bracket depth outside strings. On valid JSON this is the nesting depth; on invalid JSON it is
// exact up to the first error, which is all the parser will ever build.
void check_depth(std::string_view t, const std::string& what, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      check(++depth <= max_depth, "{}: JSON nested deeper than {} levels (at byte {})", what,
            max_depth, i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

[[noreturn]] void not_an(const json& v, const std::string& what, const std::string& field,
                         const std::string& expected) {
  fail("{}: field '{}' must be {}, got {}", what, field, expected, describe_json(v));
}

}  // namespace

std::string json_error_text(const json::exception& e, size_t max) {
  std::string_view w = e.what();
  if (w.starts_with("[json.exception.")) {
    const size_t close = w.find("] ");
    if (close != std::string_view::npos) w.remove_prefix(close + 2);
  }
  return excerpt(w, max);
}

json parse_json_checked(std::string_view text, const std::string& what, int max_depth) {
  check_depth(text, what, max_depth);
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e400
    fail("{}: not valid JSON ({})", what, json_error_text(e, 200));
  }
}

int64_t json_int(const json& v, const std::string& what, const std::string& field, int64_t lo,
                 int64_t hi) {
  const std::string range = fmt::format("an integer in [{}, {}]", lo, hi);
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (hi < 0 || u > static_cast<uint64_t>(hi)) not_an(v, what, field, range);
    x = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    // +-9e18 is inside int64, so the cast below is defined.
    if (!(std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 9e18))
      not_an(v, what, field, range);
    x = static_cast<int64_t>(d);
  } else {
    not_an(v, what, field, range);
  }
  if (x < lo || x > hi) not_an(v, what, field, range);
  return x;
}

double json_number(const json& v, const std::string& what, const std::string& field, double lo,
                   double hi) {
  const std::string range = fmt::format("a number in [{}, {}]", lo, hi);
  if (!v.is_number()) not_an(v, what, field, range);
  const double d = v.get<double>();
  if (!(std::isfinite(d) && d >= lo && d <= hi)) not_an(v, what, field, range);
  return d;
}

std::string json_string(const json& v, const std::string& what, const std::string& field) {
  if (!v.is_string()) not_an(v, what, field, "a string");
  return v.get<std::string>();
}

bool json_bool(const json& v, const std::string& what, const std::string& field) {
  if (!v.is_boolean()) not_an(v, what, field, "true or false");
  return v.get<bool>();
}

int64_t int_in_range(int64_t v, int64_t lo, int64_t hi, const std::string& what,
                     const std::string& field) {
  check(v >= lo && v <= hi, "{}: {} is {}, expected an integer in [{}, {}]", what, field, v, lo, hi);
  return v;
}

}  // namespace bosch
